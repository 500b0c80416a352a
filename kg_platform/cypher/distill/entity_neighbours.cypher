// Embedding entity resolution: for each $rows {key, vec}, the nearest existing entity of the corpus
// and its cosine (Neo4j's vector score is (1 + cos) / 2). Over-fetches $fetch to allow the corpus
// filter, since 5.26 vector indexes cannot pre-filter.
// $ix: prefix of the searched corpus's own index names ('' = the indexes shared by every corpus;
// graph/corpus_indexes.py: a corpus's own indexes keep its scores free of the other corpora).
UNWIND $rows AS row
CALL (row) {
  CALL db.index.vector.queryNodes($ix + 'entity_embedding', $fetch, row.vec) YIELD node, score
  WITH node, score
  WHERE node.corpus = $corpus
  RETURN node, 2 * score - 1 AS cos
  ORDER BY score DESC
  LIMIT 1
}
RETURN row.key AS key, node.id AS id, node.key AS matched_key, node.type AS type, cos
