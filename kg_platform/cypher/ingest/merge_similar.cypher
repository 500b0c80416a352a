// Stored once per unordered pair (a.id < b.id), read as undirected.
UNWIND $rows AS row
MATCH (a:Piece {id: row.a})
MATCH (b:Piece {id: row.b})
MERGE (a)-[r:SIMILAR]->(b)
SET r.score = row.score
