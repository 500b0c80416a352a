CREATE (r:IngestRun {id: $id, corpus: $corpus, started: datetime(), status: 'running',
                     paths: $paths})
RETURN r.id AS id
