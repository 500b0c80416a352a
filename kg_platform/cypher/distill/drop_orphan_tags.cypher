// Tags of a corpus (or all corpora) that tag no chunk any more (query-side tags are kept).
MATCH (t:Tag)
WHERE ($corpus IS NULL OR t.corpus = $corpus) AND t.class <> 'query' AND NOT (t)-[:TAGS]->()
DETACH DELETE t
RETURN count(*) AS removed
