// How many chunks of one level a corpus holds: `kgp lab eval` refuses to score an empty corpus.
MATCH (c:Chunk {corpus: $corpus})
WHERE c.level = $level
RETURN count(c) AS chunks
