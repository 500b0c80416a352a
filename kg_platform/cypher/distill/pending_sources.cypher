// Sources of a corpus with chunks (levels $levels) whose marker $marker differs from $version: the
// NLP extractor works source by source, because a concept counts only when it recurs in its source.
// $exclude: sources that failed earlier in this run. Ordered for stable batches.
MATCH (c:Chunk)
WHERE c.corpus = $corpus AND c.level IN $levels
  AND ($source_ids IS NULL OR c.source_id IN $source_ids)
  AND coalesce(c[$marker], '') <> $version
  AND NOT c.source_id IN $exclude
WITH c.source_id AS source_id, count(*) AS chunks
RETURN source_id, chunks
ORDER BY source_id
LIMIT $limit
