// Chunks of a corpus (levels $levels, optionally only the sources $source_ids) whose distillation
// marker $marker (a Chunk property such as `atomic_v`) differs from $version: the work left to do,
// so an interrupted run resumes where it stopped. $exclude: chunks that failed earlier in this run.
// Ordered for stable batches, and by content before ids (which hash the corpus name): the first
// mention of a name in a batch gives its entity's name and type (distill/pending_sources).
MATCH (c:Chunk)
WHERE c.corpus = $corpus AND c.level IN $levels
  AND ($source_ids IS NULL OR c.source_id IN $source_ids)
  AND coalesce(c[$marker], '') <> $version
  AND NOT c.id IN $exclude
OPTIONAL MATCH (s:Source {id: c.source_id})
OPTIONAL MATCH (sec:Section {id: c.section_id})
RETURN c.id AS id, c.text AS text, c.source_id AS source_id, c.level AS level,
       coalesce(s.title, '') AS source_title, coalesce(sec.path, '') AS section_path
ORDER BY coalesce(s.sha256, ''), coalesce(s.uri, ''), c.source_id, c.level, coalesce(sec.ord, 0),
         c.section_id, c.ord
LIMIT $limit
