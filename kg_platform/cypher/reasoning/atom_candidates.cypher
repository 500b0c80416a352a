// PIKE-RAG Algorithm 1, line 4: atomic-question candidates for all proposals at once.
// Per proposal: the top $k atomic questions of the corpus, kept when cos >= $delta, whose chunk
// is not already in the context ($chosen). Neo4j returns (1 + cos) / 2, so cos = 2*score - 1.
// $proposals = [{i: int, text: str, vec: [float]}]; $k_fetch >= $k leaves room for the corpus filter.
// $ix: prefix of the searched corpus's own index names ('' = the indexes shared by every corpus;
// graph/corpus_indexes.py: a corpus's own indexes keep its scores free of the other corpora).
UNWIND $proposals AS p
CALL (p) {
  CALL db.index.vector.queryNodes($ix + 'atomic_question_embedding', $k_fetch, p.vec) YIELD node AS a, score
  WITH a, score
  WHERE $corpus IS NULL OR a.corpus = $corpus
  RETURN a, 2 * score - 1 AS cos
  ORDER BY score DESC
  LIMIT $k
}
WITH p, a, cos
WHERE cos >= $delta
MATCH (a)-[:ANSWERED_BY]->(c:Chunk)
WHERE NOT c.id IN $chosen
RETURN p.i AS proposal_idx, p.text AS proposal, a.id AS atom_id, a.text AS atom,
       c.id AS chunk_id, c.text AS text, cos
ORDER BY cos DESC, atom_id, chunk_id
