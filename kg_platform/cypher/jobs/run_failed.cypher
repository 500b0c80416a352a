// A job run that failed before ingestion could record its own (:IngestRun).
CREATE (r:IngestRun {id: $id, corpus: $corpus, job: $job, trigger: $trigger, host: $host,
                     owner: $owner, started: datetime($started), finished: datetime(),
                     status: 'failed', counts: '{}', errors: $errors, tokens: 0,
                     llm_tokens: 0, duration_s: $duration_s, job_duration_s: $duration_s})
RETURN r.id AS id
