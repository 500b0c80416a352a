// Chunks carrying any of the tags $tags ({id, weight}), scored by the summed weight of their tags.
UNWIND $tags AS tag
MATCH (:Tag {id: tag.id})-[:TAGS]->(c:Chunk)
WHERE c.level IN $levels
WITH c, sum(tag.weight) AS score, collect(tag.id) AS via
OPTIONAL MATCH (s:Source {id: c.source_id})
RETURN c.id AS id, c.text AS text, c.level AS level, c.source_id AS source_id,
       s.title AS source_title, c.tokens AS tokens, score, via
ORDER BY score DESC, id
LIMIT $k
