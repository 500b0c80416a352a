// Stored state of every source of a corpus: used to skip unchanged files and to prune vanished ones.
MATCH (:Corpus {name: $corpus})-[:HAS_SOURCE]->(s:Source)
RETURN s.id AS id, s.uri AS uri, s.sha256 AS sha256, s.pipeline AS pipeline
