// Before (re-)extracting entities of chunks $ids: drop the relations they evidenced and their
// mentions; entities left without any mention are removed by `distill/drop_orphan_entities`.
// A chunk's relations are found from the entities it mentions (both extractors make every
// relation's ends mentions of its chunk), never by scanning every RELATES edge for its chunk_id:
// relationship properties are not indexed, and that scan grew with the whole distilled graph.
UNWIND $ids AS id
MATCH (c:Chunk {id: id})
OPTIONAL MATCH (e:Entity)-[:MENTIONED_IN]->(c)
OPTIONAL MATCH (e)-[r:RELATES {chunk_id: id}]->(:Entity)
DELETE r
WITH DISTINCT c
OPTIONAL MATCH (:Entity)-[m:MENTIONED_IN]->(c)
DELETE m
