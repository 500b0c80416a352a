// All pieces of a corpus with what orders them by content (text, their source's bytes, their
// place in it), for the BM25 piece graph; the caller sorts by that, never by id.
MATCH (p:Piece {corpus: $corpus})
OPTIONAL MATCH (s:Source {id: p.source_id})
RETURN p.id AS id, p.text AS text, s.sha256 AS sha256, p.doc_ord AS doc_ord
ORDER BY p.id
