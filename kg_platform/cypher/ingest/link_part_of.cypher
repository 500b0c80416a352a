UNWIND $rows AS row
MATCH (child:Chunk {id: row.child})
MATCH (parent:Chunk {id: row.parent})
MERGE (child)-[:PART_OF]->(parent)
