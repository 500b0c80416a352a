// Remove everything below the given sources (sections, chunks of every level, pieces with their
// SIMILAR edges, atomic questions answered by those chunks); the Source nodes stay (their id is
// stable across content changes). Runs inside the same transaction that writes the new version.
UNWIND $source_ids AS sid
MATCH (s:Source {id: sid})
CALL (s) {
  MATCH (s)-[:HAS_SECTION*1..]->(sec:Section)
  OPTIONAL MATCH (sec)-[:HAS_CHUNK]->(c:Chunk)
  OPTIONAL MATCH (p:Piece)-[:IN]->(c)
  OPTIONAL MATCH (q:AtomicQuestion)-[:ANSWERED_BY]->(c)
  WITH collect(DISTINCT sec) + collect(DISTINCT c) + collect(DISTINCT p) + collect(DISTINCT q) AS doomed
  UNWIND doomed AS n
  WITH DISTINCT n
  DETACH DELETE n
}
RETURN count(s) AS sources
