// Baseline `vector`: approximate nearest chunks of one level by cosine, restricted to a corpus.
// Neo4j 5.26 cannot pre-filter a vector index query, so the caller over-fetches ($fetch) and we
// filter by corpus here; `raw` is the number of hits before the filter. The index score is
// (1 + cos) / 2; we return the cosine.
CALL db.index.vector.queryNodes($index, $fetch, $qv) YIELD node, score
WITH collect({node: node, score: score}) AS hits
WITH size(hits) AS raw,
     [h IN hits WHERE $corpus IS NULL OR h.node.corpus = $corpus][0..$k] AS kept
UNWIND CASE WHEN size(kept) = 0 THEN [null] ELSE kept END AS h
WITH raw, h.node AS c, 2 * h.score - 1 AS score
OPTIONAL MATCH (s:Source {id: c.source_id})
RETURN raw, c.id AS id, c.text AS text, score, c.level AS level, c.source_id AS source_id,
       s.title AS source_title, c.tokens AS tokens
