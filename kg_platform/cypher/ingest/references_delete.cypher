// Remove REFERENCES edges no longer named (rows: {a, b}).
UNWIND $rows AS row
MATCH (:Source {id: row.a})-[r:REFERENCES]->(:Source {id: row.b})
DELETE r
