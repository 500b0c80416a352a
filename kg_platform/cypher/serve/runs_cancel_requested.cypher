// Which of these runs (ids of runs this server started) have a cancel recorded in the graph:
// a cancel asked for through another replica on the same Neo4j, which this server's own view
// of the run does not know about. `GET /v1/runs` and `GET /v1/runs/{id}` merge it in.
MATCH (r:IngestRun)
WHERE r.id IN $ids AND r.cancel_requested IS NOT NULL
RETURN r.id AS id
