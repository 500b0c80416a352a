// Set distillation markers on chunks once their distilled nodes are written ($rows: {id, marks}).
UNWIND $rows AS row
MATCH (c:Chunk {id: row.id})
SET c += row.marks
