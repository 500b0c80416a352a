// How many chunks of the distilled levels a corpus has, and how many carry each step's marker.
MATCH (c:Chunk)
WHERE c.corpus = $corpus AND c.level IN $levels
  AND ($source_ids IS NULL OR c.source_id IN $source_ids)
RETURN count(c) AS chunks, sum(coalesce(c.tokens, 0)) AS tokens,
       count(c.atomic_v) AS atomic, count(c.entities_v) AS entities, count(c.tags_v) AS tags
