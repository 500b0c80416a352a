// Chunks of every MoG level with their level label L<g> (labels cannot be parameters, hence the
// FOREACH per level), their corpus's own level label $ix L<g> (graph/corpus_indexes.py: $ix is
// the corpus's checked key prefix; a dynamic label), their vector, and the HAS_CHUNK edge from
// their section.
UNWIND $rows AS row
MERGE (c:Chunk {id: row.id})
SET c += row.props
FOREACH (_ IN CASE WHEN row.level = 1 THEN [1] ELSE [] END | SET c:L1)
FOREACH (_ IN CASE WHEN row.level = 2 THEN [1] ELSE [] END | SET c:L2)
FOREACH (_ IN CASE WHEN row.level = 3 THEN [1] ELSE [] END | SET c:L3)
FOREACH (_ IN CASE WHEN row.level = 4 THEN [1] ELSE [] END | SET c:L4)
FOREACH (_ IN CASE WHEN row.level = 5 THEN [1] ELSE [] END | SET c:L5)
FOREACH (_ IN CASE WHEN row.level = 6 THEN [1] ELSE [] END | SET c:L6)
SET c:$($ix + 'L' + toString(row.level))
WITH c, row
CALL db.create.setNodeVectorProperty(c, 'embedding', row.embedding)
WITH c, row
MATCH (sec:Section {id: row.section_id})
MERGE (sec)-[:HAS_CHUNK]->(c)
