// Before (re-)extracting entities of chunks $ids: drop their mentions and the relations they
// evidenced; entities left without any mention are removed by `distill/drop_orphan_entities`.
UNWIND $ids AS id
MATCH (c:Chunk {id: id})
OPTIONAL MATCH (:Entity)-[m:MENTIONED_IN]->(c)
DELETE m
WITH DISTINCT id
OPTIONAL MATCH (:Entity)-[r:RELATES {chunk_id: id}]->(:Entity)
DELETE r
