// A pair one side stopped choosing: its edge goes unless the other side still chooses it.
UNWIND $rows AS row
MATCH (a:Piece {id: row.a})-[r:SIMILAR]->(b:Piece {id: row.b})
WHERE NOT b.id IN coalesce(a.sim_choices, []) AND NOT a.id IN coalesce(b.sim_choices, [])
DELETE r
RETURN count(r) AS deleted
