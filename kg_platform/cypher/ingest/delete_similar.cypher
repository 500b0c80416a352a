UNWIND $rows AS row
MATCH (a:Piece {id: row.a})-[r:SIMILAR]->(b:Piece {id: row.b})
DELETE r
