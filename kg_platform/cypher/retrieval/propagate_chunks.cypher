// Multi-layer score propagation (PIKE-RAG paper): the query's cosine to nodes of every layer (vector
// indexes; Neo4j returns (1 + cos) / 2, converted), propagated onto level-1 chunks along the
// graph, aggregated per chunk with layer weights. Layers: C = level-1 chunks, P = pieces (IN),
// D = distilled (AtomicQuestion ANSWERED_BY, Entity MENTIONED_IN; mapped down PART_OF),
// I = information resources (Section and Source, propagated to the chunks below them: a Source is
// found through its root section, which ingestion gives the Source's own vector (both embed the
// document's title) and which holds every other section, so one index call serves both),
// E = the entity graph: level-1 chunks the `entity` strategy's personalized PageRank reached,
// passed in as $entity_hits [{id, s (PPR score / the best one), via (the strongest entity)}];
// T = the lexical view of level-1 chunks (BM25 through the fulltext index, divided by the best
// hit's score so it lies in (0, 1] like a cosine; skipped when $q is '').
// Candidates = the union of every layer's top $k_layer; each then gets its exact C cosine
// (vector.similarity.cosine), so a chunk found through another layer does not score C = 0.
// Aggregation: 'wsum' sum_layer lam * s, 'wmax' max_layer lam * s, 'rrf' sum_layer lam / (60 +
// rank of the chunk in that layer's ranking).
// A layer outside $layers (the caller leaves out the layers weighted 0) is not queried: it could
// only propose candidates, and its index call costs as much as a useful layer's.
// Params: $qv, $q (escaped Lucene text or ''), $fetch (over-fetch before the corpus filter),
// $k_layer, $corpus (null = all), $entity_hits, $lam {C, P, D, I, T, E}, $layers (queried layers, C always),
// $aggregate ('wsum'|'wmax'|'rrf'), $k.
// $ix: prefix of the searched corpus's own index names ('' = the indexes shared by every corpus;
// graph/corpus_indexes.py: a corpus's own indexes keep its scores free of the other corpora).
CALL () {
  CALL db.index.vector.queryNodes($ix + 'chunk_embedding_l1', $fetch, $qv) YIELD node, score
  WITH node, score WHERE $corpus IS NULL OR node.corpus = $corpus
  WITH node, score ORDER BY score DESC LIMIT $k_layer
  RETURN node AS c, 'C' AS layer, 2 * score - 1 AS s, node.id AS via
  UNION ALL
  WITH 1 AS on WHERE 'P' IN $layers
  CALL db.index.vector.queryNodes($ix + 'piece_embedding', $fetch, $qv) YIELD node, score
  WITH node, score WHERE $corpus IS NULL OR node.corpus = $corpus
  WITH node, score ORDER BY score DESC LIMIT $k_layer
  MATCH (node)-[:IN]->(c:L1)
  RETURN c, 'P' AS layer, 2 * score - 1 AS s, node.id AS via
  UNION ALL
  WITH 1 AS on WHERE 'D' IN $layers
  CALL db.index.vector.queryNodes($ix + 'atomic_question_embedding', $fetch, $qv) YIELD node, score
  WITH node, score WHERE $corpus IS NULL OR node.corpus = $corpus
  WITH node, score ORDER BY score DESC LIMIT $k_layer
  MATCH (node)-[:ANSWERED_BY]->(:Chunk)<-[:PART_OF*0..5]-(c:L1)
  RETURN c, 'D' AS layer, 2 * score - 1 AS s, node.id AS via
  UNION ALL
  WITH 1 AS on WHERE 'D' IN $layers
  CALL db.index.vector.queryNodes($ix + 'entity_embedding', $fetch, $qv) YIELD node, score
  WITH node, score WHERE $corpus IS NULL OR node.corpus = $corpus
  WITH node, score ORDER BY score DESC LIMIT $k_layer
  MATCH (node)-[:MENTIONED_IN]->(:Chunk)<-[:PART_OF*0..5]-(c:L1)
  RETURN c, 'D' AS layer, 2 * score - 1 AS s, node.id AS via
  UNION ALL
  WITH 1 AS on WHERE 'I' IN $layers
  CALL db.index.vector.queryNodes($ix + 'section_embedding', $fetch, $qv) YIELD node, score
  WITH node, score WHERE $corpus IS NULL OR node.corpus = $corpus
  WITH node, score ORDER BY score DESC LIMIT $k_layer
  MATCH (node)-[:HAS_SECTION*0..6]->(:Section)-[:HAS_CHUNK]->(c:L1)
  RETURN c, 'I' AS layer, 2 * score - 1 AS s, node.id AS via
  UNION ALL
  WITH $q AS q WHERE q <> '' AND 'T' IN $layers
  CALL db.index.fulltext.queryNodes($ix + 'chunk_text_l1', q, {limit: $fetch}) YIELD node, score
  WITH node, score WHERE $corpus IS NULL OR node.corpus = $corpus
  WITH node, score ORDER BY score DESC, node.id ASC LIMIT $k_layer
  WITH collect({n: node, s: score}) AS hits
  UNWIND hits AS h
  RETURN h.n AS c, 'T' AS layer, h.s / hits[0].s AS s, h.n.id AS via
  UNION ALL
  WITH 1 AS on WHERE 'E' IN $layers
  UNWIND $entity_hits AS h
  MATCH (c:Chunk {id: h.id})
  RETURN c, 'E' AS layer, h.s AS s, h.via AS via
}
// Per chunk and layer: the best node of that layer (and which node it was).
WITH c, layer, s, via ORDER BY s DESC, via ASC
WITH c, layer, head(collect({s: s, via: via})) AS best
// Every candidate, however it was found, gets its exact chunk-layer cosine: the C index only
// returns its top $k_layer, and a chunk reached through another layer must not score C = 0.
WITH c, collect({layer: layer, best: best}) AS found
WITH c, [x IN found WHERE x.layer <> 'C'] +
        CASE WHEN c.embedding IS NULL THEN [x IN found WHERE x.layer = 'C']
             ELSE [{layer: 'C', best: {s: 2 * vector.similarity.cosine(c.embedding, $qv) - 1,
                                       via: c.id}}] END AS found
UNWIND found AS x
WITH c, x.layer AS layer, x.best AS best
// The chunk's rank in each layer's ranking (for 'rrf'; reported in every mode).
WITH layer, c, best ORDER BY best.s DESC, c.id ASC
WITH layer, collect({c: c, best: best}) AS ranked
UNWIND range(0, size(ranked) - 1) AS i
WITH ranked[i].c AS c, layer, ranked[i].best AS best, i + 1 AS rank
WITH c, collect({layer: layer, s: best.s, via: best.via, rank: rank,
                 lam: coalesce($lam[layer], 0.0)}) AS per
WITH c, per,
     CASE $aggregate
       WHEN 'wmax' THEN reduce(m = -1e9, x IN per | CASE WHEN x.lam * x.s > m THEN x.lam * x.s ELSE m END)
       WHEN 'rrf' THEN reduce(acc = 0.0, x IN per | acc + x.lam / (60.0 + x.rank))
       ELSE reduce(acc = 0.0, x IN per | acc + x.lam * x.s)
     END AS score
ORDER BY round(score, 9) DESC, c.id ASC
LIMIT $k
OPTIONAL MATCH (src:Source {id: c.source_id})
OPTIONAL MATCH (sec:Section {id: c.section_id})
RETURN c.id AS id, c.text AS text, c.level AS level, c.tokens AS tokens, c.source_id AS source_id,
       src.title AS source_title, sec.title AS section_title, c.page_start AS page, score, per
