// PIKE-RAG Algorithm 1, fallback 2 of the reference code: chunks retrieved directly with the
// original question (top $k of the corpus in the vector index $index, cos >= $delta, not already
// in context), each with its best-matching atomic question attached (null when it has none).
CALL db.index.vector.queryNodes($index, $k_fetch, $vec) YIELD node AS c, score
WITH c, score
WHERE $corpus IS NULL OR c.corpus = $corpus
WITH c, 2 * score - 1 AS cos
ORDER BY cos DESC
LIMIT $k
WITH c, cos
WHERE cos >= $delta AND NOT c.id IN $chosen
OPTIONAL MATCH (a:AtomicQuestion)-[:ANSWERED_BY]->(c)
WITH c, cos, a
ORDER BY c.id, CASE WHEN a IS NULL THEN 0.0 ELSE vector.similarity.cosine(a.embedding, $vec) END DESC
WITH c, cos, collect(a)[0] AS best
RETURN c.id AS chunk_id, c.text AS text, cos, best.id AS atom_id, best.text AS atom
ORDER BY cos DESC, chunk_id
