// Exact entity resolution: existing entities of a corpus whose normalised name is one of $keys.
UNWIND $keys AS key
MATCH (e:Entity {key: key})
WHERE e.corpus = $corpus
RETURN key, e.id AS id, e.type AS type
