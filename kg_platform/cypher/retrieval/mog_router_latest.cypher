// The newest router of one corpus and kind ('mog' | 'mogg').
MATCH (r:Router {corpus: $corpus, kind: $kind})
RETURN r.id AS id, r.version AS version, r.path AS path, r.metrics AS metrics,
       r.n_levels AS n_levels
ORDER BY r.created DESC, r.version DESC
LIMIT 1
