// Register a trained router artifact (docs/graph-model.md: Router {id, corpus, kind, version,
// path, metrics (JSON), created}).
MERGE (r:Router {id: $id})
SET r.corpus = $corpus, r.kind = $kind, r.version = $version, r.path = $path,
    r.metrics = $metrics, r.n_levels = $n_levels, r.created = datetime()
RETURN r.id AS id
