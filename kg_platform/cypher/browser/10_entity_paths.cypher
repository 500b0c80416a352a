// title: Paragraphs linked by the entities a question names
// view: graph
// layer: distilled knowledge
// The entities (from `kgp distill`, NLP or LLM) whose names occur in a question, the chunks that
// mention them, and the shortest entity path between two of those chunks: the hops the `entity`
// strategy walks from one supporting paragraph to the next ("the director of the film whose
// composer ..."). Type a question between the quotes; empty = the two most-mentioned entities.
WITH '' AS question
MATCH (e:Entity)-[:MENTIONED_IN]->(:Chunk)
WHERE question = '' OR toLower(question) CONTAINS toLower(e.name)
WITH e, count(*) AS mentions ORDER BY mentions DESC, e.id LIMIT 2
MATCH (e)-[:MENTIONED_IN]->(c:Chunk)
WITH collect(DISTINCT e) AS named, collect(DISTINCT c)[..6] AS chunks
UNWIND chunks AS a
MATCH mention = (x:Entity)-[:MENTIONED_IN]->(a) WHERE x IN named
OPTIONAL CALL (a, chunks) {
  UNWIND chunks AS b
  WITH a, b WHERE elementId(a) < elementId(b)
  MATCH p = shortestPath((a)-[:MENTIONED_IN*..4]-(b))
  RETURN p
}
RETURN mention, p
LIMIT 50
