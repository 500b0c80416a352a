// Sources carrying the corpus name but not linked from its Corpus node (the Corpus node was
// deleted by hand, say): ingest/source_states walks from the Corpus node and would miss them.
MATCH (s:Source {corpus: $corpus})
WHERE NOT EXISTS { MATCH (:Corpus {name: $corpus})-[:HAS_SOURCE]->(s) }
RETURN s.id AS id
