// title: The granularity ladder in numbers
// view: table
// layer: corpus
// Mix-of-Granularity levels of one document: level 1 is the finest chunk (about 128 tokens by
// default); each coarser level joins two neighbours of the level below. Put part of a title
// between the quotes to choose the document.
WITH '' AS titleContains
MATCH (s:Source)
WHERE toLower(coalesce(s.title, s.uri)) CONTAINS toLower(titleContains)
WITH s ORDER BY COUNT { MATCH (x:Chunk {source_id: s.id}) } DESC, s.id LIMIT 1
MATCH (c:Chunk {source_id: s.id})
RETURN s.title AS source, c.level AS level, count(c) AS chunks,
       round(avg(c.tokens), 1) AS avg_tokens, max(c.tokens) AS max_tokens,
       COUNT { MATCH (p:Piece {source_id: s.id}) } AS pieces
ORDER BY level
