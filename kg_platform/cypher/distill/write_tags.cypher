// (:Tag {id, name, key, class, corpus})-[:TAGS]->(:Chunk). $rows: {id, name, key, class, corpus, chunk_id}.
UNWIND $rows AS row
MERGE (t:Tag {id: row.id})
ON CREATE SET t.name = row.name, t.key = row.key, t.class = row.class, t.corpus = row.corpus
WITH t, row
MATCH (c:Chunk {id: row.chunk_id})
MERGE (t)-[:TAGS]->(c)
