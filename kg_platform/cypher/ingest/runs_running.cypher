// Runs recorded as running by a process on this host (checked for liveness): of one corpus, or
// of every corpus when $corpus is null.
MATCH (r:IngestRun {status: 'running', host: $host})
WHERE ($corpus IS NULL OR r.corpus = $corpus) AND r.id <> $current
RETURN r.id AS id, r.pid AS pid, r.corpus AS corpus
