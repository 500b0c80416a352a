// MoG two-step selection (spec §1.4), hybrid variant: every level is scored by BM25 (fulltext
// chunk_text_l<g>) and by cosine (vector chunk_embedding_l<g>; exact over the scope's chunks when
// $sources is set); each index's top-k_r of a level is normalised on its own and a chunk's t is
// the sum of its normalised scores (a chunk found by one index only gets that one), its raw score
// (ties) the sum of BM25 and cosine. Params as retrieval/mog_bm25 plus $qv; $q may be '' (then
// the dense side alone scores). Same steps 2-5 as the BM25 and dense variants.
// Step 1a: top-k_r chunks of every level of every corpus, per index.
// pl.ix: prefix of the corpus's own index names ('' = the indexes shared by every corpus;
// graph/corpus_indexes.py: a corpus's own indexes keep its scores free of the other corpora).
UNWIND $plan AS pl
UNWIND pl.levels AS g
CALL (pl, g) {
  WITH pl, g WHERE $q <> ''
  CALL db.index.fulltext.queryNodes(pl.ix + 'chunk_text_l' + toString(g), $q, {limit: $fetch})
  YIELD node, score
  WITH node, score WHERE node.corpus = pl.corpus
                   AND ($sources IS NULL OR node.source_id IN $sources)
  RETURN node AS p, score AS s, 'bm25' AS ix
  ORDER BY s DESC, p.id ASC
  LIMIT $k_r
  UNION ALL
  WITH pl, g WHERE $sources IS NULL
  CALL db.index.vector.queryNodes(pl.ix + 'chunk_embedding_l' + toString(g), $fetch, $qv)
  YIELD node, score
  WITH node, 2 * score - 1 AS cos WHERE node.corpus = pl.corpus
  RETURN node AS p, cos AS s, 'vector' AS ix
  ORDER BY s DESC, p.id ASC
  LIMIT $k_r
  UNION ALL
  WITH pl, g WHERE $sources IS NOT NULL
  MATCH (src:Source) WHERE src.id IN $sources AND src.corpus = pl.corpus
  MATCH (src)-[:HAS_SECTION*1..8]->(:Section)-[:HAS_CHUNK]->(node:Chunk)
  WHERE node.level = g AND node.embedding IS NOT NULL
  WITH DISTINCT node
  WITH node, 2 * vector.similarity.cosine(node.embedding, $qv) - 1 AS cos
  RETURN node AS p, cos AS s, 'vector' AS ix
  ORDER BY s DESC, p.id ASC
  LIMIT $k_r
}
// Step 1b: normalise per level per corpus per index (min-max, or divide by the maximum), then
// add the two indexes' normalised scores of a chunk.
WITH pl, g, ix, collect({p: p, s: s}) AS hits
WITH pl, g, hits,
     reduce(m = hits[0].s, h IN hits | CASE WHEN h.s > m THEN h.s ELSE m END) AS hi,
     reduce(m = hits[0].s, h IN hits | CASE WHEN h.s < m THEN h.s ELSE m END) AS lo
UNWIND hits AS h
WITH pl, g, h.p AS p, h.s AS raw,
     CASE
       WHEN $normalise = 'max' THEN CASE WHEN hi > 0 THEN h.s / hi ELSE 1.0 END
       WHEN hi > lo THEN (h.s - lo) / (hi - lo)
       ELSE 1.0
     END AS t
WITH pl, g, p, sum(t) AS t, sum(raw) AS raw
// Step 2: map every retrieved chunk down to the level-1 chunks it contains (P_g(c) = p).
MATCH (p)<-[:PART_OF*0..5]-(c:L1)
WITH pl, c, collect({g: g, t: t, raw: raw, p: p.id}) AS per
// Step 3: weighted score of each finest chunk: sum_g w[g] * t_rs(c)[g] (0 where not retrieved).
// Min-max puts the k_r-th hit of a level at 0, level with chunks no weighted level found, so
// equal scores are ordered by the weighted raw scores (tie) before the id.
WITH pl, c, per, reduce(acc = 0.0, x IN per | acc + pl.w[x.g - 1] * x.t) AS score,
     reduce(acc = 0.0, x IN per | acc + pl.w[x.g - 1] * x.raw) AS tie
// Step 4: expand each finest chunk to its container at the router level g_r (or the highest
// level below it when the document is too short to have one).
MATCH (c)-[:PART_OF*0..5]->(a:Chunk)
WHERE a.level <= pl.g_r
WITH pl, c, per, score, tie, a ORDER BY a.level DESC
WITH pl, c, per, score, tie, head(collect(a)) AS container
// Step 5: pool all corpora; two finest chunks with the same container count once (the better).
WITH pl, c, per, score, tie, container ORDER BY round(score, 9) DESC, round(tie, 9) DESC, c.id ASC
WITH container, pl.corpus AS corpus,
     collect({c: c.id, score: score, tie: tie, per: per}) AS members
WITH container, corpus, members, members[0].score AS score, members[0].tie AS tie
ORDER BY round(score, 9) DESC, round(tie, 9) DESC, container.id ASC
LIMIT $k
OPTIONAL MATCH (src:Source {id: container.source_id})
OPTIONAL MATCH (sec:Section {id: container.section_id})
RETURN container.id AS id, container.text AS text, container.level AS level,
       container.tokens AS tokens, container.source_id AS source_id, corpus,
       src.title AS source_title, sec.title AS section_title, container.page_start AS page,
       score, members[0].c AS finest, members[0].per AS per, [m IN members | m.c] AS finest_ids
