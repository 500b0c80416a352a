// The section path each reranked item sits in, for the late-interaction rerank to read in front
// of the item's text. $ids are item ids: a chunk's id, or a piece's id (MoGG groups are named by
// their centre piece), which resolves to the level-1 chunk holding it. One row per id that has a
// section; an id with none is simply absent.
UNWIND $ids AS id
OPTIONAL MATCH (c:Chunk {id: id})
OPTIONAL MATCH (:Piece {id: id})-[:IN]->(pc:Chunk)
WITH id, coalesce(c, pc) AS chunk
WHERE chunk IS NOT NULL
MATCH (sec:Section)-[:HAS_CHUNK]->(chunk)
WITH id, coalesce(sec.path, sec.title) AS section
WHERE section IS NOT NULL AND section <> ''
RETURN id, head(collect(section)) AS section
