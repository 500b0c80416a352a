// What links the late rerank's candidates to each other, for the chain-pair score
// (retrieval/rerank/chain_pair.py): per item id (a chunk's id, or a piece's: its level-1 chunk),
// its source's id and title, the keys of the bridging entities its chunk mentions (those
// 2..$max_degree chunks mention) and the ids of the sources its source names or is named by
// (REFERENCES). One row per id that resolves.
UNWIND $ids AS id
OPTIONAL MATCH (c:Chunk {id: id})
OPTIONAL MATCH (:Piece {id: id})-[:IN]->(pc:Chunk)
WITH id, coalesce(c, pc) AS chunk
WHERE chunk IS NOT NULL
OPTIONAL MATCH (s:Source {id: chunk.source_id})
CALL (chunk) {
  OPTIONAL MATCH (e:Entity)-[:MENTIONED_IN]->(chunk)
  WITH e, CASE WHEN e IS NULL THEN 0 ELSE COUNT { (e)-[:MENTIONED_IN]->() } END AS deg
  RETURN collect(CASE WHEN 1 < deg AND deg <= $max_degree THEN e.key END) AS entities
}
CALL (s) {
  OPTIONAL MATCH (s)-[:REFERENCES]-(n:Source)
  RETURN collect(DISTINCT n.id) AS refs
}
RETURN id, chunk.source_id AS source, s.title AS title, entities, refs
