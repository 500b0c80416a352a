// All pieces of a corpus, in a stable order, for the BM25 piece graph.
MATCH (p:Piece {corpus: $corpus})
RETURN p.id AS id, p.text AS text
ORDER BY p.id
