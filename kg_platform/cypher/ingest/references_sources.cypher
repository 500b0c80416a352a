// Every source of a corpus with its title and what its REFERENCES edges were last computed for
// (ingest/references.py): refs_sha = the content hash its outgoing edges were read from,
// refs_title = the title its incoming edges were found for. A source whose sha256 or title moved
// since is pending.
MATCH (:Corpus {name: $corpus})-[:HAS_SOURCE]->(s:Source)
RETURN s.id AS id, coalesce(s.title, '') AS title, s.sha256 AS sha256,
       s.refs_sha AS refs_sha, s.refs_title AS refs_title
