// The newest ingestion runs of the corpora a key may see (`GET /v1/runs` for a key that does
// not cover every corpus): as serve/runs_recent, for a list of corpus names.
MATCH (r:IngestRun)
WHERE r.corpus IN $corpora
RETURN r.id AS id, r.corpus AS corpus, r.job AS job, r.status AS status,
       toString(r.started) AS started, toString(r.finished) AS finished,
       r.duration_s AS duration_s, r.counts AS counts, r.errors AS errors, r.tokens AS tokens,
       r.paths AS paths
ORDER BY r.started DESC
LIMIT $limit
