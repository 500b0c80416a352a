// Entity-graph retrieval, step 1: the corpus's entities a question names. For each of the
// question's mentions $rows {key, vec} (the NLP extractor run on the question, each name
// embedded): the entity with that normalised name (cos 1), and the $per_mention entities nearest
// the name in the entity vector index with cos >= $min_cos (Neo4j's score is (1 + cos) / 2,
// converted; over-fetching $fetch for the corpus filter). One row per entity, its best cos.
UNWIND $rows AS row
CALL (row) {
  MATCH (e:Entity {key: row.key})
  WHERE $corpus IS NULL OR e.corpus = $corpus
  RETURN e, 1.0 AS cos
  UNION ALL
  CALL db.index.vector.queryNodes('entity_embedding', $fetch, row.vec) YIELD node, score
  WITH node, 2 * score - 1 AS cos
  WHERE ($corpus IS NULL OR node.corpus = $corpus) AND cos >= $min_cos
  WITH node, cos ORDER BY cos DESC LIMIT $per_mention
  RETURN node AS e, cos
}
WITH e, max(cos) AS cos
RETURN e.id AS id, e.name AS name, e.key AS key, cos
ORDER BY cos DESC, id ASC
