CREATE (r:IngestRun {id: $id, corpus: $corpus, started: datetime(), status: 'running',
                     paths: $paths, host: $host, pid: $pid})
RETURN r.id AS id
