// Retention: delete the job's runs beyond the newest $keep_runs, and those older than $keep_days.
// Runs still 'running' are never deleted.
MATCH (r:IngestRun {job: $job})
WHERE r.status <> 'running'
WITH r ORDER BY r.started DESC
WITH collect(r) AS runs
UNWIND range(0, size(runs) - 1) AS i
WITH runs[i] AS r, i
WHERE i >= $keep_runs
   OR ($keep_days IS NOT NULL AND r.started < datetime() - duration({days: $keep_days}))
DETACH DELETE r
RETURN count(*) AS deleted
