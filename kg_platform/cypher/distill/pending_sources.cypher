// Sources of a corpus with chunks (levels $levels) whose marker $marker differs from $version: the
// NLP extractor works source by source, because a concept counts only when it recurs in its source.
// $exclude: sources that failed earlier in this run. Ordered for stable batches, by the sources'
// content (sha256) first: their ids hash the corpus name, and the batches decide which mention
// of a name comes first and which entity a similar name joins, so an order by id made the entity
// layer (and the entity walk's recall) depend on what the corpus is called.
MATCH (c:Chunk)
WHERE c.corpus = $corpus AND c.level IN $levels
  AND ($source_ids IS NULL OR c.source_id IN $source_ids)
  AND coalesce(c[$marker], '') <> $version
  AND NOT c.source_id IN $exclude
WITH c.source_id AS source_id, count(*) AS chunks
OPTIONAL MATCH (s:Source {id: source_id})
RETURN source_id, chunks
ORDER BY coalesce(s.sha256, ''), coalesce(s.uri, ''), source_id
LIMIT $limit
