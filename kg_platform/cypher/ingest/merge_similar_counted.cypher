// merge_similar, returning how many edges did not exist before.
UNWIND $rows AS row
MATCH (a:Piece {id: row.a})
MATCH (b:Piece {id: row.b})
OPTIONAL MATCH (a)-[old:SIMILAR]->(b)
WITH a, b, row, old IS NULL AS created
MERGE (a)-[r:SIMILAR]->(b)
SET r.score = row.score
RETURN sum(CASE WHEN created THEN 1 ELSE 0 END) AS created
