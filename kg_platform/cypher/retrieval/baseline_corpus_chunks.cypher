// How many chunks of one level a corpus holds: `kgp eval` refuses to score an empty corpus.
MATCH (c:Chunk {corpus: $corpus})
WHERE c.level = $level
RETURN count(c) AS chunks
