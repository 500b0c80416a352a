// (:Tag {id, name, key, class, corpus})-[:TAGS]->(:Chunk). $rows: {id, name, key, class, corpus, chunk_id}.
// $ix: the corpus's checked key prefix, for its own label (graph/corpus_indexes.py).
UNWIND $rows AS row
MERGE (t:Tag {id: row.id})
ON CREATE SET t.name = row.name, t.key = row.key, t.class = row.class, t.corpus = row.corpus
SET t:$($ix + 'Tag')
WITH t, row
MATCH (c:Chunk {id: row.chunk_id})
MERGE (t)-[:TAGS]->(c)
