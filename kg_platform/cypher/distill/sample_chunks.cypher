// A deterministic sample of a corpus's chunks (spread by id hash) for proposing tag classes.
MATCH (c:Chunk)
WHERE c.corpus = $corpus AND c.level IN $levels
RETURN c.id AS id, c.text AS text
ORDER BY c.id
LIMIT $limit
