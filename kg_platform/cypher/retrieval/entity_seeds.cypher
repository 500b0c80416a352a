// Entity-graph retrieval, step 1: the corpus's entities a question names. For each of the
// question's mentions $rows {key, vec} (the NLP extractor run on the question, each name
// embedded): the entity with that normalised name (cos 1), and the $per_mention entities nearest
// the name in the entity vector index with cos >= $min_cos (when row.vec is given: the caller
// leaves it null for a common noun phrase, whose neighbours are other common nouns) (Neo4j's score is (1 + cos) / 2,
// converted; over-fetching $fetch for the corpus filter). One row per entity: its best cos and
// its seed weight w = max over its mentions of cos * row.w (row.w: the caller's weight of the
// mention's kind, lower for a common noun phrase than for a named entity), and named = 1 when a
// named mention (row.named = 1, not a common noun phrase) reached it.
// $ix: prefix of the searched corpus's own index names ('' = the indexes shared by every corpus;
// graph/corpus_indexes.py: a corpus's own indexes keep its scores free of the other corpora).
UNWIND $rows AS row
CALL (row) {
  MATCH (e:Entity {key: row.key})
  WHERE $corpus IS NULL OR e.corpus = $corpus
  RETURN e, 1.0 AS cos
  UNION ALL
  WITH row WHERE row.vec IS NOT NULL
  CALL db.index.vector.queryNodes($ix + 'entity_embedding', $fetch, row.vec) YIELD node, score
  WITH node, 2 * score - 1 AS cos
  WHERE ($corpus IS NULL OR node.corpus = $corpus) AND cos >= $min_cos
  WITH node, cos ORDER BY cos DESC LIMIT $per_mention
  RETURN node AS e, cos
}
WITH e, max(cos) AS cos, max(cos * row.w) AS w, max(row.named) AS named
RETURN e.id AS id, e.name AS name, e.key AS key, cos, w, named
ORDER BY w DESC, key ASC, id ASC  // ties by name, not by id (ids hash the corpus name)
