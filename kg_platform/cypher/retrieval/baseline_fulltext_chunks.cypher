// Baseline `bm25`: Lucene BM25 over one chunk level's fulltext index, restricted to a corpus.
// The index spans every corpus, so the caller over-fetches ($fetch) and we filter here;
// `raw` (hits before the corpus filter) tells the caller whether a bigger fetch could add more.
// $index is one of our own index names (chunk_text_l<g>), never user text; $q is Lucene-escaped.
// $sources (null = no scope) keeps only the chunks of those source ids: a document scope.
CALL db.index.fulltext.queryNodes($index, $q, {limit: $fetch}) YIELD node, score
WITH collect({node: node, score: score}) AS hits
WITH size(hits) AS raw,
     [h IN hits WHERE ($corpus IS NULL OR h.node.corpus = $corpus)
                 AND ($sources IS NULL OR h.node.source_id IN $sources)][0..$k] AS kept
UNWIND CASE WHEN size(kept) = 0 THEN [null] ELSE kept END AS h
WITH raw, h.node AS c, h.score AS score
OPTIONAL MATCH (s:Source {id: c.source_id})
RETURN raw, c.id AS id, c.text AS text, score, c.level AS level, c.source_id AS source_id,
       s.title AS source_title, c.tokens AS tokens
