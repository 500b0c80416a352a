// Ingestion runs, ad-hoc and job, newest first: of one corpus, or of every corpus when $corpus
// is null.
MATCH (r:IngestRun)
WHERE $corpus IS NULL OR r.corpus = $corpus
RETURN r.id AS id, r.corpus AS corpus, r.status AS status, toString(r.started) AS started,
       toString(r.finished) AS finished, r.duration_s AS duration_s, r.paths AS paths,
       r.host AS host, r.pid AS pid, r.job AS job, r.trigger AS trigger, r.counts AS counts,
       r.errors AS errors, r.warnings AS warnings, r.tokens AS tokens
ORDER BY r.started DESC, r.id DESC
LIMIT $limit
