// Knowledge atomizing (PIKE-RAG paper): (:AtomicQuestion)-[:ANSWERED_BY]->(:Chunk).
// $rows: {id, chunk_id, text, embedding}; corpus and source_id are copied from the chunk; $ix: the
// corpus's checked key prefix, for its own label (graph/corpus_indexes.py).
UNWIND $rows AS row
MATCH (c:Chunk {id: row.chunk_id})
MERGE (q:AtomicQuestion {id: row.id})
SET q.corpus = c.corpus, q.source_id = c.source_id, q.chunk_id = c.id, q.text = row.text,
    q:$($ix + 'AtomicQuestion')
WITH q, c, row
CALL db.create.setNodeVectorProperty(q, 'embedding', row.embedding)
MERGE (q)-[:ANSWERED_BY]->(c)
