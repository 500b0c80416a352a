// For each new title (row.q = a Lucene phrase of its tokens), the corpus's sources with a
// finest-level chunk holding that phrase: the only texts that can name it (the matcher then
// checks case, word boundaries and the rule of ingest/title_match.py). `hits` counts the
// index's answers before the corpus filter; hits = $limit means the answer was cut (the caller
// then reads every text instead). $ix: the corpus's own index prefix, or '' for the shared ones.
UNWIND $rows AS row
CALL (row) {
  CALL db.index.fulltext.queryNodes($ix + 'chunk_text_l1', row.q, {limit: $limit}) YIELD node
  WITH collect(node) AS nodes
  RETURN size(nodes) AS hits,
         [x IN nodes WHERE x.corpus = $corpus | x.source_id] AS sources
}
RETURN row.id AS id, hits, sources
