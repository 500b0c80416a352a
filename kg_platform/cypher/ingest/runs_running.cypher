// Runs of this corpus recorded as running by a process on this host (checked for liveness).
MATCH (r:IngestRun {corpus: $corpus, status: 'running', host: $host})
WHERE r.id <> $current
RETURN r.id AS id, r.pid AS pid
