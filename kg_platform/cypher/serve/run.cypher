// One ingestion run's record by id (`GET /v1/runs/{id}` for a run this server did not start).
MATCH (r:IngestRun {id: $id})
RETURN r.id AS id, r.corpus AS corpus, r.job AS job, r.status AS status,
       toString(r.started) AS started, toString(r.finished) AS finished,
       r.duration_s AS duration_s, r.counts AS counts, r.errors AS errors, r.tokens AS tokens,
       r.paths AS paths, r.cancel_requested IS NOT NULL AS cancel_requested
