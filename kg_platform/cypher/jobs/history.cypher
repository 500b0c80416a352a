// The latest runs, newest first, of one job (or of every job when $job is null).
MATCH (r:IngestRun)
WHERE ($job IS NULL AND r.job IS NOT NULL) OR r.job = $job
RETURN r.id AS id, r.job AS job, r.corpus AS corpus, r.status AS status,
       toString(r.started) AS started, toString(r.finished) AS finished,
       r.duration_s AS duration_s, r.counts AS counts, r.errors AS errors, r.tokens AS tokens,
       r.llm_tokens AS llm_tokens, r.trigger AS trigger, r.host AS host
ORDER BY r.started DESC
LIMIT $limit
