// (:Entity)-[:RELATES {type, evidence, source_id, chunk_id, by}]->(:Entity), one per chunk and
// type; `by` = the extractor ('llm' | 'nlp'; the NLP one's `co_occurs` edges are the weak kind).
UNWIND $rows AS row
MATCH (a:Entity {id: row.src}), (b:Entity {id: row.dst})
MERGE (a)-[r:RELATES {type: row.type, chunk_id: row.chunk_id}]->(b)
SET r.evidence = row.evidence, r.source_id = row.source_id, r.by = row.by
