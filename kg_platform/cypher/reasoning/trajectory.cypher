// One stored trajectory with the ids of the chunks it chose, in order.
MATCH (t:Trajectory {id: $id})
OPTIONAL MATCH (t)-[r:CHOSE]->(c:Chunk)
WITH t, r, c ORDER BY r.round
RETURN t {.*} AS trajectory, [x IN collect(c.id) WHERE x IS NOT NULL] AS chunk_ids
