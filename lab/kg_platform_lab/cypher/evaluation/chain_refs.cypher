// The REFERENCES links between reranked candidates, for the chain-pair study
// (kg_platform_lab/rerank/chain_pair.py): per item id (a chunk's id, or a piece's: its level-1
// chunk), its source's id and the ids of the sources its source names or is named by.
UNWIND $ids AS id
OPTIONAL MATCH (c:Chunk {id: id})
OPTIONAL MATCH (:Piece {id: id})-[:IN]->(pc:Chunk)
WITH id, coalesce(c, pc) AS chunk
WHERE chunk IS NOT NULL
OPTIONAL MATCH (:Source {id: chunk.source_id})-[:REFERENCES]-(n:Source)
RETURN id, chunk.source_id AS source, collect(DISTINCT n.id) AS refs
