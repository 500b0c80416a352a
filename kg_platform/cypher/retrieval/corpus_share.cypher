// The share of all chunks that belong to $corpus (sizes the over-fetch of index queries, which
// cannot filter by corpus before ranking). Counts come from the count store and chunk_corpus.
MATCH (c:Chunk) WITH count(c) AS total
OPTIONAL MATCH (m:Chunk {corpus: $corpus})
WITH total, count(m) AS mine
RETURN CASE WHEN total = 0 THEN 0.0 ELSE toFloat(mine) / total END AS share
