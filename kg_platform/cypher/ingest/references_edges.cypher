// The stored REFERENCES edges leaving the corpus's sources ($sources = null) or the given ones.
MATCH (:Corpus {name: $corpus})-[:HAS_SOURCE]->(a:Source)-[r:REFERENCES]->(b:Source)
WHERE $sources IS NULL OR a.id IN $sources
RETURN a.id AS a, b.id AS b, r.mentions AS mentions
