// Entities of a corpus (or of every corpus when $corpus is null) that no chunk mentions any more.
MATCH (e:Entity)
WHERE ($corpus IS NULL OR e.corpus = $corpus) AND NOT (e)-[:MENTIONED_IN]->()
DETACH DELETE e
RETURN count(*) AS removed
