// Record what the sources' REFERENCES edges were computed for (rows: {id, sha256, title}); a
// source replaced meanwhile keeps its old marks and stays pending for the next sync.
UNWIND $rows AS row
MATCH (s:Source {id: row.id})
WHERE s.sha256 = row.sha256 AND coalesce(s.title, '') = row.title
SET s.refs_sha = row.sha256, s.refs_title = row.title
