UNWIND $rows AS row
MATCH (a:Chunk {id: row.a})
MATCH (b:Chunk {id: row.b})
MERGE (a)-[:NEXT]->(b)
