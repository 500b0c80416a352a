// The finest-level chunk texts of the given sources, what their titles are looked for in.
UNWIND $ids AS sid
MATCH (s:Source {id: sid})-[:HAS_SECTION*1..]->(:Section)-[:HAS_CHUNK]->(c:Chunk {level: 1})
RETURN sid AS id, collect(c.text) AS texts
