// One row per source: the corpus, the Source (properties replaced), its title vector, and the
// run that ingested it.
UNWIND $rows AS row
MERGE (co:Corpus {name: row.corpus})
SET co.piece_graph_dirty = true
MERGE (s:Source {id: row.id})
SET s += row.props, s.ingested_at = datetime()
MERGE (co)-[:HAS_SOURCE]->(s)
WITH s, row
CALL db.create.setNodeVectorProperty(s, 'embedding', row.embedding)
WITH s, row
MATCH (r:IngestRun {id: $run_id})
MERGE (r)-[:INGESTED]->(s)
