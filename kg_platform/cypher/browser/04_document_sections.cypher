// title: A document's sections
// view: graph
// layer: corpus
// The section tree of one document (the one with the most sections; put part of a title between
// the quotes to choose another). Sections nest by heading depth; double-click to expand chunks.
WITH '' AS titleContains
MATCH (s:Source)
WHERE toLower(coalesce(s.title, s.uri)) CONTAINS toLower(titleContains)
WITH s ORDER BY COUNT { MATCH (x:Section {source_id: s.id}) } DESC, s.id LIMIT 1
MATCH p = (s)-[:HAS_SECTION]->+(:Section)
RETURN p
LIMIT 200
