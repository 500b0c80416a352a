// One ingestion run by id.
MATCH (r:IngestRun {id: $id})
RETURN r.id AS id, r.corpus AS corpus, r.status AS status, toString(r.started) AS started,
       toString(r.finished) AS finished, r.duration_s AS duration_s, r.paths AS paths,
       r.host AS host, r.pid AS pid, r.job AS job, r.trigger AS trigger, r.counts AS counts,
       r.errors AS errors, r.warnings AS warnings, r.tokens AS tokens
