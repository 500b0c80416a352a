// title: An answer's evidence as a graph
// view: graph
// layer: answers
// The answer (a Trajectory), the chunks it CHOSE, their sections and source, and the atomic
// questions that point at them. Same answer id convention as the previous query.
WITH '' AS answerId
MATCH (t:Trajectory)
WHERE answerId = '' OR t.id = answerId
WITH t ORDER BY t.created DESC LIMIT 1
MATCH chose = (t)-[:CHOSE]->(c:Chunk)
OPTIONAL MATCH home = (c)<-[:HAS_CHUNK]-(:Section)<-[:HAS_SECTION*1..8]-(:Source)
OPTIONAL MATCH asked = (c)<-[:ANSWERED_BY]-(:AtomicQuestion)
RETURN chose, home, asked
LIMIT 100
