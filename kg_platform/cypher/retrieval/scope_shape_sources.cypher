// The shape of a document scope, for the `auto` strategy: the scoped sources (at most $sample)
// and their level-2 chunks, reached from the sources (no label scan over every chunk).
MATCH (s:Source) WHERE s.id IN $sources
WITH s LIMIT $sample
MATCH (s)-[:HAS_SECTION*1..8]->(:Section)-[:HAS_CHUNK]->(c:Chunk)
WHERE c.level = 2
RETURN count(DISTINCT s) AS sources, count(DISTINCT c) AS chunks
