// The median length (tokens) of the documents a query searches: the scoped sources $sources, or
// up to $sample sources of each corpus in $corpora (through the source_corpus index, so the cost
// does not grow with the corpus). MoGG's `auto` hops read it: in long documents a hop also
// follows NEXT, so groups read as passages.
UNWIND $corpora AS corpus
CALL (corpus) {
  MATCH (s:Source {corpus: corpus})
  WHERE $sources IS NULL OR s.id IN $sources
  RETURN s.tokens AS tokens
  LIMIT $sample
}
RETURN percentileDisc(coalesce(tokens, 0), 0.5) AS median, count(*) AS sources
