// Where retrieved items sit: source title/uri, section path, page and level, for chunk or piece
// ids (a piece inherits its level-1 chunk's section and page).
UNWIND $ids AS id
OPTIONAL MATCH (c:Chunk {id: id})
OPTIONAL MATCH (p:Piece {id: id})
OPTIONAL MATCH (pc:Chunk {id: p.chunk_id})
WITH id, coalesce(c, pc) AS chunk, coalesce(c, p) AS node
WHERE node IS NOT NULL
OPTIONAL MATCH (s:Source {id: node.source_id})
OPTIONAL MATCH (sec:Section {id: chunk.section_id})
RETURN id, node.source_id AS source_id, s.title AS source_title, s.uri AS source_uri,
       coalesce(sec.path, sec.title) AS section, chunk.page_start AS page, chunk.level AS level,
       chunk.id AS chunk_id
