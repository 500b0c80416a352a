// Rendered from entity_ppr.cypher.template by `python -m kg_platform.retrieval.strategies.entity`: edit that.
// Entity-graph retrieval, step 2 (HippoRAG's idea): a personalized PageRank over the bipartite
// graph Entity -[:MENTIONED_IN]- Chunk, truncated to three power-iteration steps, scoring chunks.
// Restart vector r: the question's entities $seeds [{id, w}] share 1 - $chunk_weight of the mass,
// the $k_seed level-1 chunks nearest the question (vector index) share $chunk_weight (all of it
// when no entity was found), each in proportion to its weight. A step moves every node's mass to
// its MENTIONED_IN neighbours in equal parts (an entity mentioned in many chunks passes little to
// each: node specificity) and keeps the $width strongest nodes. An entity mentioned in more than
// $max_degree chunks does not pass mass on at all (a hub links everything to everything), and a
// chunk passes its mass only to its bridging entities, those mentioned in 2..$max_degree chunks:
// an entity only this chunk mentions could only hand the mass back to it, and a hub would drop
// it, so sharing with them starved the second hop (lab/results/2026-11-27/entity-walk).
// score(c) = sum_t $damping^t * w_t(c) for t = 0..3, the truncated PPR series: entity seeds reach
// chunks at t = 1 (chunks that name them) and t = 3 (chunks that share an entity with those);
// chunk seeds at t = 0 and t = 2.
// Returns per chunk its per-step mass and the active entities that mention it (`via`: the
// entity hops that brought it in, strongest first; `seed` = the question named it).
// Params: $seeds, $qv, $fetch, $k_seed, $corpus (null = all), $chunk_weight, $damping,
// $max_degree, $width, $k.
// Ties (equal to 12 decimals: sums of the same terms in another order differ in the last bits)
// are ordered by content (an entity's key, a chunk's text) before id: ids hash the corpus name,
// and a ranking must not depend on what the corpus is called.
// $ix: prefix of the searched corpus's own index names ('' = the indexes shared by every corpus;
// graph/corpus_indexes.py: a corpus's own indexes keep its scores free of the other corpora).
CALL () {
  CALL db.index.vector.queryNodes($ix + 'chunk_embedding_l1', $fetch, $qv) YIELD node, score
  WITH node, score WHERE $corpus IS NULL OR node.corpus = $corpus
  WITH node, 2 * score - 1 AS cos ORDER BY cos DESC LIMIT $k_seed
  RETURN collect({n: node, s: CASE WHEN cos > 0 THEN cos ELSE 0.0 END}) AS cseeds
}
CALL () {
  UNWIND $seeds AS seed
  MATCH (e:Entity {id: seed.id})
  RETURN collect({n: e, s: toFloat(seed.w)}) AS eseeds
}
WITH cseeds, eseeds,
     reduce(t = 0.0, x IN cseeds | t + x.s) AS ct, reduce(t = 0.0, x IN eseeds | t + x.s) AS et
WITH eseeds,
     [x IN cseeds WHERE ct > 0 |
        {n: x.n, s: (CASE WHEN et > 0 THEN $chunk_weight ELSE 1.0 END) * x.s / ct}] +
     [x IN eseeds WHERE et > 0 | {n: x.n, s: (1.0 - $chunk_weight) * x.s / et}] AS w0
CALL (w0) {
  UNWIND w0 AS x
  WITH x.n AS n, x.s AS s
  WITH n, s, COUNT { (n)-[:MENTIONED_IN]-() } AS deg
  WHERE deg > 0 AND (NOT n:Entity OR deg <= $max_degree)
  MATCH (n)-[:MENTIONED_IN]-(m)
  WITH n, s, m, CASE WHEN n:Chunk THEN COUNT { (m)-[:MENTIONED_IN]-() } END AS bridges
  WHERE n:Entity OR (1 < bridges AND bridges <= $max_degree)
  WITH n, s, collect(m) AS next
  UNWIND next AS m
  WITH m, sum(s / size(next)) AS s
  ORDER BY round(s, 12) DESC, coalesce(m.key, m.text) ASC, m.id ASC LIMIT $width
  RETURN collect({n: m, s: s}) AS w1
}
CALL (w1) {
  UNWIND w1 AS x
  WITH x.n AS n, x.s AS s
  WITH n, s, COUNT { (n)-[:MENTIONED_IN]-() } AS deg
  WHERE deg > 0 AND (NOT n:Entity OR deg <= $max_degree)
  MATCH (n)-[:MENTIONED_IN]-(m)
  WITH n, s, m, CASE WHEN n:Chunk THEN COUNT { (m)-[:MENTIONED_IN]-() } END AS bridges
  WHERE n:Entity OR (1 < bridges AND bridges <= $max_degree)
  WITH n, s, collect(m) AS next
  UNWIND next AS m
  WITH m, sum(s / size(next)) AS s
  ORDER BY round(s, 12) DESC, coalesce(m.key, m.text) ASC, m.id ASC LIMIT $width
  RETURN collect({n: m, s: s}) AS w2
}
CALL (w2) {
  UNWIND w2 AS x
  WITH x.n AS n, x.s AS s
  WITH n, s, COUNT { (n)-[:MENTIONED_IN]-() } AS deg
  WHERE deg > 0 AND (NOT n:Entity OR deg <= $max_degree)
  MATCH (n)-[:MENTIONED_IN]-(m)
  WITH n, s, m, CASE WHEN n:Chunk THEN COUNT { (m)-[:MENTIONED_IN]-() } END AS bridges
  WHERE n:Entity OR (1 < bridges AND bridges <= $max_degree)
  WITH n, s, collect(m) AS next
  UNWIND next AS m
  WITH m, sum(s / size(next)) AS s
  ORDER BY round(s, 12) DESC, coalesce(m.key, m.text) ASC, m.id ASC LIMIT $width
  RETURN collect({n: m, s: s}) AS w3
}
WITH eseeds, [x IN w0 + w1 + w2 + w3 WHERE 'Entity' IN labels(x.n)] AS ents, w0, w1, w2, w3
UNWIND [{t: 0, w: w0}, {t: 1, w: w1}, {t: 2, w: w2}, {t: 3, w: w3}] AS step
UNWIND step.w AS x
WITH eseeds, ents, step.t AS t, x.n AS c, x.s AS s
WHERE c:Chunk
WITH eseeds, ents, c, sum(s * $damping ^ t) AS score, collect({t: t, s: s}) AS per
ORDER BY round(score, 12) DESC, c.text ASC, c.id ASC
LIMIT $k
CALL (c, ents, eseeds) {
  UNWIND ents AS x
  WITH x.n AS e, x.s AS s
  WHERE (e)-[:MENTIONED_IN]->(c)
  WITH e, sum(s) AS s
  ORDER BY round(s, 12) DESC, e.key ASC, e.id ASC
  LIMIT 3
  RETURN collect({id: e.id, name: e.name, s: s,
                  seed: any(y IN eseeds WHERE y.n = e)}) AS via
}
OPTIONAL MATCH (src:Source {id: c.source_id})
OPTIONAL MATCH (sec:Section {id: c.section_id})
RETURN c.id AS id, c.text AS text, c.level AS level, c.tokens AS tokens, c.source_id AS source_id,
       src.title AS source_title, sec.title AS section_title, c.page_start AS page, score, per, via
