// The newest ingestion runs, ad-hoc and job, of one corpus or of all ($corpus null): what
// `GET /v1/runs` lists next to the runs the server itself started.
MATCH (r:IngestRun)
WHERE $corpus IS NULL OR r.corpus = $corpus
RETURN r.id AS id, r.corpus AS corpus, r.job AS job, r.status AS status,
       toString(r.started) AS started, toString(r.finished) AS finished,
       r.duration_s AS duration_s, r.counts AS counts, r.errors AS errors, r.tokens AS tokens,
       r.paths AS paths, r.cancel_requested IS NOT NULL AS cancel_requested
ORDER BY r.started DESC
LIMIT $limit
