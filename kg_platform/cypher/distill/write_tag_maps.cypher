// Store query-tag -> corpus-tag mappings (auto-tagging step 3). $rows: {qid, qname, qkey, tag_id, confidence}.
UNWIND $rows AS row
MERGE (q:Tag {id: row.qid})
ON CREATE SET q.name = row.qname, q.key = row.qkey, q.class = 'query', q.corpus = $corpus
WITH q, row
MATCH (t:Tag {id: row.tag_id})
MERGE (q)-[m:MAPS_TO]->(t)
SET m.confidence = row.confidence
