// title: Ingestion runs
// view: table
// layer: information resources
// Every (:IngestRun), newest first: which job ran it (`kgp jobs run`), its status
// (completed / completed_with_errors / failed), counts, errors, tokens and duration.
MATCH (r:IngestRun)
RETURN toString(r.started) AS started, r.job AS job, r.corpus AS corpus, r.status AS status,
       r.duration_s AS seconds, r.tokens AS tokens, r.counts AS counts, r.errors AS errors,
       r.id AS run_id
ORDER BY r.started DESC
LIMIT 25
