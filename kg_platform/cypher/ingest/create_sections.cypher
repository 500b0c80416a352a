// Sections in depth-first order (a parent precedes its children); the parent is the Source for a
// root section, else another Section. Each gets its corpus's own label ($ix + 'Section',
// graph/corpus_indexes.py: $ix is the corpus's checked key prefix).
UNWIND $rows AS row
MERGE (sec:Section {id: row.id})
SET sec += row.props, sec:$($ix + 'Section')
WITH sec, row
CALL db.create.setNodeVectorProperty(sec, 'embedding', row.embedding)
WITH sec, row
OPTIONAL MATCH (src:Source {id: row.parent_id})
OPTIONAL MATCH (par:Section {id: row.parent_id})
WITH sec, coalesce(src, par) AS parent
MERGE (parent)-[:HAS_SECTION]->(sec)
