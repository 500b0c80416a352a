// The share of one level's chunks that belong to the scoped sources $sources: sizes the
// over-fetch of fulltext queries, which cannot filter by source before ranking. Walks from the
// sources down their section tree, so it costs the scope's size, not the graph's.
MATCH (c:Chunk) WHERE c.level = $level
WITH count(c) AS total
OPTIONAL MATCH (s:Source)-[:HAS_SECTION]->(:Section)-[:HAS_SECTION*0..]->(:Section)-[:HAS_CHUNK]->(m:Chunk)
WHERE s.id IN $sources AND m.level = $level
WITH total, count(DISTINCT m) AS mine
RETURN CASE WHEN total = 0 THEN 0.0 ELSE toFloat(mine) / total END AS share, mine
