// Runs whose process is gone: they were killed (kill -9, power loss) before recording an end.
MATCH (r:IngestRun {status: 'running'})
WHERE r.id IN $ids
SET r.status = 'interrupted', r.finished = datetime(),
    r.errors = '[{"path": "", "error": "interrupted", "reason": "the process ended without recording the run (killed or crashed); run the same ingestion again to resume it", "hint": ""}]'
RETURN count(r) AS n
