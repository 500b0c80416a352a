// The shape of a whole corpus, for the `auto` strategy: its sources and their level-2 chunks
// (many one-passage sources = a passage corpus; few sources of dozens of chunks = long
// documents). $corpus null = every corpus.
MATCH (c:Chunk)
WHERE c.level = 2 AND ($corpus IS NULL OR c.corpus = $corpus)
RETURN count(DISTINCT c.source_id) AS sources, count(c) AS chunks
