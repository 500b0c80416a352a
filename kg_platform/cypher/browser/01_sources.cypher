// title: Sources: what is in your graph
// view: table
// layer: information resources
// Every corpus (a MoG knowledge source) with its documents, newest first: pages, chunks and the
// coarsest MoG level built. The source_id column is what the later queries accept.
MATCH (co:Corpus)-[:HAS_SOURCE]->(s:Source)
CALL (s) {
  OPTIONAL MATCH (c:Chunk {source_id: s.id})
  RETURN count(c) AS chunks, max(c.level) AS levels
}
RETURN co.name AS corpus, s.title AS source, s.mime AS mime, s.pages AS pages, chunks, levels,
       toString(s.ingested_at) AS ingested_at, s.id AS source_id
ORDER BY ingested_at DESC
LIMIT 50
