// `atomic` strategy, path (b) of PIKE-RAG paper: query -> nearest atomic questions -> their chunks.
// A chunk scores the best cosine among its atomic questions (Neo4j's score is (1 + cos) / 2).
// Over-fetches $fetch questions because 5.26 vector indexes cannot pre-filter by corpus.
// $ix: prefix of the searched corpus's own index names ('' = the indexes shared by every corpus;
// graph/corpus_indexes.py: a corpus's own indexes keep its scores free of the other corpora).
CALL db.index.vector.queryNodes($ix + 'atomic_question_embedding', $fetch, $qv) YIELD node AS a, score
WITH a, score
WHERE $corpus IS NULL OR a.corpus = $corpus
WITH a, 2 * score - 1 AS cos
ORDER BY cos DESC
MATCH (a)-[:ANSWERED_BY]->(c:Chunk)
WITH c, max(cos) AS cos, collect(a.id)[0..3] AS atoms, collect(a.text)[0] AS best
ORDER BY cos DESC, c.id
LIMIT $k
OPTIONAL MATCH (s:Source {id: c.source_id})
RETURN c.id AS id, c.text AS text, c.level AS level, c.source_id AS source_id,
       s.title AS source_title, c.tokens AS tokens, cos AS score, atoms, best
