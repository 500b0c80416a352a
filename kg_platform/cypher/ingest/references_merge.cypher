// Write REFERENCES edges (rows: {a, b, mentions}): source a's text names source b's title
// `mentions` times (ingest/title_match.py; `by` says how the edge was found).
UNWIND $rows AS row
MATCH (a:Source {id: row.a}), (b:Source {id: row.b})
MERGE (a)-[r:REFERENCES]->(b)
SET r.mentions = row.mentions, r.by = 'title'
