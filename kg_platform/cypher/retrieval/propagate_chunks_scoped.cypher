// Multi-layer score propagation inside a document scope ($sources = source ids): the same layers,
// aggregation and result shape as retrieval/propagate_chunks, but every vector layer is scored
// exactly over the scope's own nodes (vector.similarity.cosine, no HNSW index): one document
// holds a few hundred chunks and a few thousand pieces, and a global top-k filtered by source
// would often hold none of them. The lexical layer T still uses the fulltext index (Lucene has
// no source filter), over-fetched by the caller ($fetch, sized by the scope's share) and filtered.
// Layers outside $layers (weighted 0 by the caller) are not scored, as in the unscoped query.
// Params: $qv, $q, $fetch, $k_layer, $corpus (null = any), $sources, $lam, $layers, $aggregate, $k.
// $ix: prefix of the searched corpus's own index names ('' = the indexes shared by every corpus;
// graph/corpus_indexes.py: a corpus's own indexes keep its scores free of the other corpora).
CALL () {
  MATCH (src:Source) WHERE src.id IN $sources AND ($corpus IS NULL OR src.corpus = $corpus)
  CALL (src) {
    MATCH (src)-[:HAS_SECTION*1..8]->(:Section)-[:HAS_CHUNK]->(node:L1)
    WHERE node.embedding IS NOT NULL
    WITH node, vector.similarity.cosine(node.embedding, $qv) AS sim
    ORDER BY sim DESC LIMIT $k_layer
    RETURN node AS c, 'C' AS layer, 2 * sim - 1 AS s, node.id AS via
    UNION ALL
    WITH src WHERE 'P' IN $layers
    MATCH (src)-[:HAS_SECTION*1..8]->(:Section)-[:HAS_CHUNK]->(c:L1)<-[:IN]-(node:Piece)
    WHERE node.embedding IS NOT NULL
    WITH c, node, vector.similarity.cosine(node.embedding, $qv) AS sim
    ORDER BY sim DESC LIMIT $k_layer
    RETURN c, 'P' AS layer, 2 * sim - 1 AS s, node.id AS via
    UNION ALL
    WITH src WHERE 'D' IN $layers
    MATCH (src)-[:HAS_SECTION*1..8]->(:Section)-[:HAS_CHUNK]->(:Chunk)<-[:ANSWERED_BY]-(node:AtomicQuestion)
    WHERE node.embedding IS NOT NULL
    WITH DISTINCT node
    WITH node, vector.similarity.cosine(node.embedding, $qv) AS sim
    ORDER BY sim DESC LIMIT $k_layer
    MATCH (node)-[:ANSWERED_BY]->(:Chunk)<-[:PART_OF*0..5]-(c:L1)
    RETURN c, 'D' AS layer, 2 * sim - 1 AS s, node.id AS via
    UNION ALL
    WITH src WHERE 'D' IN $layers
    MATCH (src)-[:HAS_SECTION*1..8]->(:Section)-[:HAS_CHUNK]->(:Chunk)<-[:MENTIONED_IN]-(node:Entity)
    WHERE node.embedding IS NOT NULL
    WITH DISTINCT node
    WITH node, vector.similarity.cosine(node.embedding, $qv) AS sim
    ORDER BY sim DESC LIMIT $k_layer
    MATCH (node)-[:MENTIONED_IN]->(:Chunk)<-[:PART_OF*0..5]-(c:L1)
    WHERE c.source_id = src.id
    RETURN c, 'D' AS layer, 2 * sim - 1 AS s, node.id AS via
    UNION ALL
    WITH src WHERE 'I' IN $layers
    MATCH (src)-[:HAS_SECTION*1..8]->(node:Section)
    WHERE node.embedding IS NOT NULL
    WITH node, vector.similarity.cosine(node.embedding, $qv) AS sim
    ORDER BY sim DESC LIMIT $k_layer
    MATCH (node)-[:HAS_SECTION*0..6]->(:Section)-[:HAS_CHUNK]->(c:L1)
    RETURN c, 'I' AS layer, 2 * sim - 1 AS s, node.id AS via
    UNION ALL
    WITH src WHERE src.embedding IS NOT NULL AND 'I' IN $layers
    MATCH (src)-[:HAS_SECTION*1..8]->(:Section)-[:HAS_CHUNK]->(c:L1)
    RETURN c, 'I' AS layer, vector.similarity.cosine(src.embedding, $qv) * 2 - 1 AS s, src.id AS via
  }
  RETURN c, layer, s, via
  UNION ALL
  WITH $q AS q WHERE q <> '' AND 'T' IN $layers
  CALL db.index.fulltext.queryNodes($ix + 'chunk_text_l1', q, {limit: $fetch}) YIELD node, score
  WITH node, score WHERE ($corpus IS NULL OR node.corpus = $corpus) AND node.source_id IN $sources
  WITH node, score ORDER BY score DESC, node.id ASC LIMIT $k_layer
  WITH collect({n: node, s: score}) AS hits
  UNWIND hits AS h
  RETURN h.n AS c, 'T' AS layer, h.s / hits[0].s AS s, h.n.id AS via
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
