UNWIND $rows AS row
MATCH (a:Piece {id: row.a})
MATCH (b:Piece {id: row.b})
MERGE (a)-[:NEXT]->(b)
