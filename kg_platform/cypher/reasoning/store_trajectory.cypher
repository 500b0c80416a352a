// One decomposition run (PIKE-RAG Algorithm 1 or 2) as a (:Trajectory), linked to the chunks it
// chose, in order. Re-storing the same id replaces its properties and CHOSE edges.
MERGE (t:Trajectory {id: $id})
SET t += $props
WITH t
CALL (t) {
  MATCH (t)-[r:CHOSE]->()
  DELETE r
}
WITH t
UNWIND range(0, size($chunk_ids) - 1) AS i
MATCH (c:Chunk {id: $chunk_ids[i]})
MERGE (t)-[r:CHOSE {round: i + 1}]->(c)
RETURN count(r) AS edges
