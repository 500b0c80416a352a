// How many REFERENCES edges leave the corpus's sources.
MATCH (:Corpus {name: $corpus})-[:HAS_SOURCE]->(:Source)-[r:REFERENCES]->()
RETURN count(r) AS n
