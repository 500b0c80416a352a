MATCH (a:Piece {corpus: $corpus})-[r:SIMILAR]->(b:Piece)
RETURN a.id AS a, b.id AS b, r.score AS score
