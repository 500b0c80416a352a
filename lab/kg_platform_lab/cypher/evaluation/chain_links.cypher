// What links reranked candidates to each other, for the chain rerank (kg_platform_lab/rerank/chain_rerank.py):
// per item id (a chunk's id, or a piece's: its level-1 chunk), its source's title and the keys of
// the bridging entities its chunk mentions (those 2..$max_degree chunks mention: an entity no
// other chunk names links nothing, a hub links everything). One row per id that resolves.
UNWIND $ids AS id
OPTIONAL MATCH (c:Chunk {id: id})
OPTIONAL MATCH (:Piece {id: id})-[:IN]->(pc:Chunk)
WITH id, coalesce(c, pc) AS chunk
WHERE chunk IS NOT NULL
OPTIONAL MATCH (s:Source {id: chunk.source_id})
OPTIONAL MATCH (e:Entity)-[:MENTIONED_IN]->(chunk)
WITH id, s, e, CASE WHEN e IS NULL THEN 0 ELSE COUNT { (e)-[:MENTIONED_IN]->() } END AS deg
WITH id, s, collect(CASE WHEN 1 < deg AND deg <= $max_degree THEN e.key END) AS entities
RETURN id, s.title AS title, entities
