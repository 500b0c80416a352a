// One source with its sections in document order, each with its chunks of MoG level $level in
// order (the SDK's source_outline; the MCP tool get_source).
MATCH (s:Source {id: $source_id})
OPTIONAL MATCH (s)-[:HAS_SECTION]->+(sec:Section)
WITH s, sec ORDER BY sec.ord
WITH s, collect(sec {
  .id, .title, .path, .level, .page,
  chunks: COLLECT {
    MATCH (sec)-[:HAS_CHUNK]->(c:Chunk)
    WHERE c.level = $level
    WITH c ORDER BY c.ord
    RETURN c {.id, .text, .tokens, .page_start}
  }
}) AS sections
RETURN s.id AS id, s.title AS title, s.uri AS uri, s.corpus AS corpus, s.pages AS pages,
       s.tokens AS tokens, sections
