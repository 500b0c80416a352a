// MoGG (MoG paper) with hop radius bound 0 over SIMILAR (Cypher path bounds and relationship
// types cannot be parameters, so there is one file per radius and hop set: mogg_r0..mogg_r3 over
// SIMILAR, mogg_next_r0..r3 over SIMILAR|NEXT, all rendered from retrieval/mogg.cypher.template by
// `python -m kg_platform.retrieval.strategies.mogg`). Levels 1..1 = radius 0..0 around a centre piece.
// Params: $q (escaped Lucene text, '' = no lexical seeds), $qv (query vector, null = no dense
// seeds), $plan = [{corpus, w: [w_1..w_1], g_r}], $seeds, $fetch, $k_r, $normalise
// ('minmax'|'max'), $cap (group token cap), $cand (finest candidates expanded), $k, $sources
// (document scope: source ids, or null). In a scope, dense seeds are the exact cosine of the
// scope's pieces (no index), BM25 seeds are filtered by source (the caller sizes $fetch), and
// groups never leave the scope.
// Step 1: seed pieces (group centres) from the piece fulltext index (BM25) and/or the piece
// vector index (cosine), each list normalised per corpus; a seed's score is the sum of its
// normalised scores; the best $seeds seeds are kept.
// pl.ix: prefix of the corpus's own index names ('' = the indexes shared by every corpus;
// graph/corpus_indexes.py: a corpus's own indexes keep its scores free of the other corpora).
UNWIND $plan AS pl
CALL (pl) {
  WITH pl WHERE $q <> ''
  CALL db.index.fulltext.queryNodes(pl.ix + 'piece_text', $q, {limit: $fetch})
  YIELD node, score
  WITH node, score WHERE node.corpus = pl.corpus
                   AND ($sources IS NULL OR node.source_id IN $sources)
  RETURN node AS seed, score AS s, 'bm25' AS via
  ORDER BY s DESC, seed.id ASC
  LIMIT $seeds
  UNION ALL
  WITH pl WHERE $qv IS NOT NULL AND $sources IS NULL
  CALL db.index.vector.queryNodes(pl.ix + 'piece_embedding', $fetch, $qv)
  YIELD node, score
  WITH node, 2 * score - 1 AS score WHERE node.corpus = pl.corpus
  RETURN node AS seed, score AS s, 'vector' AS via
  ORDER BY s DESC, seed.id ASC
  LIMIT $seeds
  UNION ALL
  WITH pl WHERE $qv IS NOT NULL AND $sources IS NOT NULL
  MATCH (src:Source) WHERE src.id IN $sources AND src.corpus = pl.corpus
  MATCH (src)-[:HAS_SECTION*1..8]->(:Section)-[:HAS_CHUNK]->(:L1)<-[:IN]-(node:Piece)
  WHERE node.embedding IS NOT NULL
  WITH DISTINCT node
  WITH node, 2 * vector.similarity.cosine(node.embedding, $qv) - 1 AS score
  RETURN node AS seed, score AS s, 'vector' AS via
  ORDER BY s DESC, seed.id ASC
  LIMIT $seeds
}
WITH pl, via, collect({p: seed, s: s}) AS raw
WITH pl, via, raw,
     reduce(m = raw[0].s, x IN raw | CASE WHEN x.s > m THEN x.s ELSE m END) AS hi,
     reduce(m = raw[0].s, x IN raw | CASE WHEN x.s < m THEN x.s ELSE m END) AS lo
UNWIND raw AS x
WITH pl, x.p AS p, CASE
       WHEN $normalise = 'max' THEN CASE WHEN hi > 0 THEN x.s / hi ELSE 1.0 END
       WHEN hi > lo THEN (x.s - lo) / (hi - lo) ELSE 1.0 END AS t
WITH pl, p, sum(t) AS t
ORDER BY round(t, 9) DESC, p.id ASC
WITH pl, collect({id: p.id, p: p, t: t})[0..$seeds] AS seeds
// Step 2: each seed's neighbourhood over SIMILAR (undirected), each piece once with its hop
// distance, nearest hops first, then higher edge weight (a NEXT hop, between neighbours in the
// document, weighs 1.0).
UNWIND seeds AS sd
CALL (sd) {
  WITH sd.p AS centre
  MATCH path = (centre)-[:SIMILAR*0..0]-(n:Piece)
  WHERE $sources IS NULL OR all(x IN nodes(path) WHERE x.source_id IN $sources)
  WITH n, length(path) AS h,
       CASE WHEN length(path) = 0 THEN 1.0
            ELSE coalesce(last(relationships(path)).score, 1.0) END AS ew
  ORDER BY h ASC, ew DESC
  WITH n, head(collect({h: h, ew: ew})) AS best
  ORDER BY best.h ASC, best.ew DESC, n.id ASC
  RETURN collect({id: n.id, hop: best.h, tok: coalesce(n.tokens, 0)}) AS hood
}
// Step 3: the level-g group of every seed (radius g-1, token-capped in BFS order) and its score
// (sum of the normalised seed scores of its members); top-k_r groups per level.
UNWIND range(1, 1) AS g
WITH pl, seeds, sd, g, reduce(acc = {tok: 0, ids: [], full: false}, m IN hood |
       CASE
         WHEN acc.full OR m.hop > g - 1 THEN acc
         WHEN size(acc.ids) = 0 OR acc.tok + m.tok <= $cap
           THEN {tok: acc.tok + m.tok, ids: acc.ids + [m.id], full: false}
         ELSE {tok: acc.tok, ids: acc.ids, full: true}
       END).ids AS members
WITH pl, [x IN seeds | {id: x.id, t: x.t}] AS st, g, sd.id AS centre, members,
     reduce(s = 0.0, x IN seeds | s + CASE WHEN x.id IN members THEN x.t ELSE 0.0 END) AS gs
ORDER BY round(gs, 9) DESC, centre ASC
WITH pl, st, g, collect({c: centre, m: members, s: gs})[0..$k_r] AS top
WITH pl, st, g, top,
     reduce(m = top[0].s, x IN top | CASE WHEN x.s > m THEN x.s ELSE m END) AS hi,
     reduce(m = top[0].s, x IN top | CASE WHEN x.s < m THEN x.s ELSE m END) AS lo
UNWIND top AS grp
WITH pl, st, g, grp, CASE
       WHEN $normalise = 'max' THEN CASE WHEN hi > 0 THEN grp.s / hi ELSE 1.0 END
       WHEN hi > lo THEN (grp.s - lo) / (hi - lo) ELSE 1.0 END AS t
// Step 4: t_rs(c)[g] = best normalised score of a retrieved level-g group holding piece c;
// score(c) = sum_g w[g] * t_rs(c)[g]; pool the corpora.
UNWIND grp.m AS c
WITH pl, st, c, g, max(t) AS t
WITH pl, st, c, collect({g: g, t: t}) AS per
WITH pl, c, per, reduce(acc = 0.0, x IN per | acc + pl.w[x.g - 1] * x.t) AS score,
     coalesce([x IN st WHERE x.id = c | x.t][0], -1.0) AS own
// ties (all members of the best group score alike) go to the piece's own seed score
ORDER BY round(score, 9) DESC, own DESC, c ASC
WITH collect({c: c, score: score, per: per, corpus: pl.corpus, g_r: pl.g_r})[0..$cand] AS cands
// Step 5: the router-level group centred on each candidate (token-capped in BFS order). At
// router level 1 (radius 0, most questions) that group is the centre alone: no walk.
UNWIND range(0, size(cands) - 1) AS i
WITH i, cands[i] AS cd
MATCH (centre:Piece {id: cd.c})
CALL (centre, cd) {
  WITH centre, cd WHERE cd.g_r = 1
  RETURN [centre] AS group
  UNION ALL
  WITH centre, cd WHERE cd.g_r > 1
  MATCH path = (centre)-[:SIMILAR*0..0]-(n:Piece)
  WHERE $sources IS NULL OR all(x IN nodes(path) WHERE x.source_id IN $sources)
  WITH n, length(path) AS h,
       CASE WHEN length(path) = 0 THEN 1.0
            ELSE coalesce(last(relationships(path)).score, 1.0) END AS ew
  ORDER BY h ASC, ew DESC
  WITH n, head(collect({h: h, ew: ew})) AS best
  WHERE best.h <= cd.g_r - 1
  ORDER BY best.h ASC, best.ew DESC, n.id ASC
  // (the walk always finds the centre: an empty list is this branch filtered out, whose
  // aggregation would still return a row)
  WITH collect({n: n, tok: coalesce(n.tokens, 0)}) AS ordered WHERE size(ordered) > 0
  RETURN reduce(acc = {tok: 0, ms: [], full: false}, m IN ordered |
         CASE
           WHEN acc.full THEN acc
           WHEN size(acc.ms) = 0 OR acc.tok + m.tok <= $cap
             THEN {tok: acc.tok + m.tok, ms: acc.ms + [m.n], full: false}
           ELSE {tok: acc.tok, ms: acc.ms, full: true}
         END).ms AS group
}
WITH i, cd, group ORDER BY i
WITH collect({cd: cd, group: group}) AS groups
// Step 6: keep groups in rank order; a candidate already inside a kept group is skipped, and a
// piece a kept group already holds is dropped from later groups (each piece once in the result).
WITH reduce(acc = {sel: [], seen: []}, x IN groups |
       CASE WHEN size(acc.sel) >= $k OR x.cd.c IN acc.seen THEN acc
            ELSE {sel: acc.sel + [{cd: x.cd, ms: [n IN x.group WHERE NOT n.id IN acc.seen]}],
                  seen: acc.seen + [n IN x.group | n.id]} END).sel AS sel
UNWIND range(0, size(sel) - 1) AS rank
WITH rank, sel[rank] AS x, sel[rank].cd.c AS centre_id
// Members in document order, the centre's source first.
CALL (x, centre_id) {
  UNWIND x.ms AS n
  WITH n, [m IN x.ms WHERE m.id = centre_id][0].source_id AS home
  ORDER BY CASE WHEN n.source_id = home THEN 0 ELSE 1 END, n.source_id, n.doc_ord, n.id
  RETURN collect(n.id) AS members, collect(n.text) AS texts, collect(n.source_id) AS sources,
         reduce(t = 0, m IN collect(n) | t + coalesce(m.tokens, 0)) AS tok
}
OPTIONAL MATCH (src:Source {id: sources[0]})
RETURN centre_id AS id, x.cd.corpus AS corpus, x.cd.score AS score, x.cd.per AS per,
       x.cd.g_r AS level, members, texts, tok AS tokens, sources, src.title AS source_title
ORDER BY rank
