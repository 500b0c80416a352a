// Baseline `vector` inside a document scope: exact cosine over the scoped sources' chunks of one
// level, no HNSW index. One document holds a few hundred chunks per level, so exact scoring is
// cheaper than asking the global index for enough neighbours to survive a source filter, and it
// never starves. $level is the chunk level, $sources the scoped source ids, $corpus null = any.
MATCH (s:Source) WHERE s.id IN $sources AND ($corpus IS NULL OR s.corpus = $corpus)
MATCH (s)-[:HAS_SECTION*1..8]->(:Section)-[:HAS_CHUNK]->(c:Chunk)
WHERE c.level = $level AND c.embedding IS NOT NULL
WITH DISTINCT s, c, vector.similarity.cosine(c.embedding, $qv) AS sim
WITH s, c, 2 * sim - 1 AS score
ORDER BY score DESC, c.id ASC
LIMIT $k
RETURN 0 AS raw, c.id AS id, c.text AS text, score, c.level AS level, c.source_id AS source_id,
       s.title AS source_title, c.tokens AS tokens
