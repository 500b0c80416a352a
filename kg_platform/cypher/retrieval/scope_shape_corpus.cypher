// The shape of a corpus, for the `auto` strategy: a sample of its sources (at most $sample) and
// the level-2 chunks they hold (many one-passage sources = a passage corpus; few sources of dozens
// of chunks = long documents). A sample keeps the cost flat however large the corpus grows; the
// kind of corpus shows in any few dozen of its sources. $corpus null = every corpus.
MATCH (s:Source)
WHERE $corpus IS NULL OR s.corpus = $corpus
WITH s LIMIT $sample
MATCH (s)-[:HAS_SECTION*1..8]->(:Section)-[:HAS_CHUNK]->(c:Chunk)
WHERE c.level = 2
RETURN count(DISTINCT s) AS sources, count(DISTINCT c) AS chunks
