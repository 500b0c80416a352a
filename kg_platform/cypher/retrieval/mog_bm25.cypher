// MoG two-step selection (MoG paper) over every corpus of $plan, BM25 through the per-level
// fulltext indexes chunk_text_l<g>. Params: $q (escaped Lucene text), $plan = [{corpus, levels:
// the levels to search (the weights not treated as zero, and g_r),
// w: [w_1..w_n] router weights, g_r: router level}], $k_r, $fetch (over-fetch before the corpus
// filter: indexes span all corpora), $normalise ('minmax'|'max'), $k, $sources (document scope:
// source ids, or null; Lucene cannot pre-filter, so the caller sizes $fetch by the scope's share).
// Step 1a: top-k_r chunks of every level of every corpus.
// pl.ix: prefix of the corpus's own index names ('' = the indexes shared by every corpus;
// graph/corpus_indexes.py: a corpus's own indexes keep its scores free of the other corpora).
UNWIND $plan AS pl
UNWIND pl.levels AS g
CALL (pl, g) {
  CALL db.index.fulltext.queryNodes(pl.ix + 'chunk_text_l' + toString(g), $q, {limit: $fetch})
  YIELD node, score
  WITH node, score WHERE node.corpus = pl.corpus
                   AND ($sources IS NULL OR node.source_id IN $sources)
  RETURN node AS p, score AS s
  ORDER BY s DESC, p.id ASC
  LIMIT $k_r
}
// Step 1b: normalise per level per corpus (min-max, or divide by the level maximum).
WITH pl, g, collect({p: p, s: s}) AS hits
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
