// title: Atomic questions and entities of a chunk
// view: graph
// layer: distilled knowledge
// The distilled layer of one chunk (the one answering the most atomic questions): the questions
// it ANSWERS, the entities MENTIONED_IN it and how they RELATE. Put a word from the chunk's text
// between the quotes to choose another.
WITH '' AS textContains
MATCH (c:Chunk)<-[:ANSWERED_BY]-(:AtomicQuestion)
WHERE c.text CONTAINS textContains
WITH c, count(*) AS questions ORDER BY questions DESC, c.id LIMIT 1
OPTIONAL MATCH asked = (:AtomicQuestion)-[:ANSWERED_BY]->(c)
OPTIONAL MATCH named = (e:Entity)-[:MENTIONED_IN]->(c)
OPTIONAL MATCH related = (e)-[:RELATES]-(:Entity)
RETURN c, asked, named, related
LIMIT 100
