// Node counts of the given corpora ($names), each an index seek on the label's corpus property
// (source_corpus, section_corpus, chunk_corpus, piece_corpus), so the cost follows the corpus'
// size, never the whole graph's. A name with no Corpus node and no source is left out.
UNWIND $names AS name
CALL (name) {
  MATCH (n:Source {corpus: name})
  RETURN count(n) AS sources
}
CALL (name) {
  MATCH (n:Section {corpus: name})
  RETURN count(n) AS sections
}
CALL (name) {
  MATCH (n:Chunk {corpus: name})
  RETURN count(n) AS chunks
}
CALL (name) {
  MATCH (n:Piece {corpus: name})
  RETURN count(n) AS pieces
}
WITH name, sources, sections, chunks, pieces
WHERE sources > 0 OR EXISTS { MATCH (:Corpus {name: name}) }
RETURN name, sources, sections, chunks, pieces
ORDER BY name
