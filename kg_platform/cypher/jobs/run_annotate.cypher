// Add the job's view of a run to the (:IngestRun) the ingestion path recorded.
MATCH (r:IngestRun {id: $id})
SET r.job = $job, r.trigger = $trigger, r.host = $host, r.owner = $owner,
    r.llm_tokens = $llm_tokens, r.distill = $distill, r.job_duration_s = $job_duration_s,
    r.status = CASE WHEN $status IS NULL THEN r.status ELSE $status END,
    r.errors = CASE WHEN $extra_errors IS NULL THEN r.errors ELSE $extra_errors END
RETURN r.id AS id, r.status AS status
