// Corpus tags that could mean a query tag: exact key matches first, then fulltext (`tag_name`)
// hits. $rows: {key, q (Lucene-escaped text)}. Query-side tags (class 'query') are excluded.
// $ix: prefix of the searched corpus's own index names ('' = the indexes shared by every corpus;
// graph/corpus_indexes.py: a corpus's own indexes keep its scores free of the other corpora).
UNWIND $rows AS row
CALL (row) {
  MATCH (t:Tag {key: row.key})
  WHERE t.corpus = $corpus AND t.class <> 'query'
  RETURN t, 100.0 AS score
  UNION
  CALL db.index.fulltext.queryNodes($ix + 'tag_name', row.q, {limit: $fetch}) YIELD node AS t, score
  WITH t, score
  WHERE t.corpus = $corpus AND t.class <> 'query'
  RETURN t, score
}
WITH row, t, max(score) AS score
ORDER BY row.key, score DESC
WITH row, collect({id: t.id, name: t.name, class: t.class, exact: t.key = row.key})[0..$k] AS cands
RETURN row.key AS key, cands
