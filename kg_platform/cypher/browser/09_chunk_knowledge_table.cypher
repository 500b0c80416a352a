// title: The same chunk as a table
// view: table
// layer: distilled knowledge
// Text, questions, entities and tags of the chunk shown by the previous query.
WITH '' AS textContains
MATCH (c:Chunk)<-[:ANSWERED_BY]-(:AtomicQuestion)
WHERE c.text CONTAINS textContains
WITH c, count(*) AS questions ORDER BY questions DESC, c.id LIMIT 1
RETURN c.id AS chunk_id, c.level AS level, left(c.text, 200) AS text,
       COLLECT { MATCH (q:AtomicQuestion)-[:ANSWERED_BY]->(c) RETURN q.text } AS atomic_questions,
       COLLECT { MATCH (e:Entity)-[:MENTIONED_IN]->(c) RETURN e.name + ' (' + coalesce(e.type, '?') + ')' } AS entities,
       COLLECT { MATCH (t:Tag)-[:TAGS]->(c) RETURN t.class + ': ' + t.name } AS tags
