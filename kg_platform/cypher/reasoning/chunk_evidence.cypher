// What a citation needs for each chunk id: source title/uri, section path, page, level.
UNWIND $ids AS id
MATCH (c:Chunk {id: id})
OPTIONAL MATCH (s:Source {id: c.source_id})
OPTIONAL MATCH (sec:Section {id: c.section_id})
RETURN c.id AS chunk_id, c.text AS text, c.level AS level, c.page_start AS page,
       c.source_id AS source_id, s.title AS source_title, s.uri AS source_uri,
       coalesce(sec.path, sec.title) AS section
