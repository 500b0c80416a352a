// title: A run and the sources it wrote
// view: graph
// layer: information resources
// The latest run that wrote something, the sources it (re)ingested and their corpus. Put a run
// id between the quotes to see another run.
WITH '' AS runId
MATCH (r:IngestRun)
WHERE (runId = '' OR r.id = runId) AND EXISTS { (r)-[:INGESTED]->(:Source) }
WITH r ORDER BY r.started DESC LIMIT 1
MATCH p = (r)-[:INGESTED]->(s:Source)<-[:HAS_SOURCE]-(co:Corpus)
RETURN p
LIMIT 50
