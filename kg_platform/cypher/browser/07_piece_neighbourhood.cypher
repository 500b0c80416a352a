// title: A piece's MoGG neighbourhood
// view: graph
// layer: corpus
// Mix-of-Granularity-Graph: pieces (one or two sentences) linked by SIMILAR (BM25 neighbours),
// read as undirected. This is the best-connected piece with everything within two hops and the
// chunks the pieces sit IN. Put a word between the quotes to choose the centre piece.
WITH '' AS textContains
MATCH (p:Piece)-[:SIMILAR]-()
WHERE p.text CONTAINS textContains
WITH p, count(*) AS degree ORDER BY degree DESC, p.id LIMIT 1
MATCH hood = (p)-[:SIMILAR]-{1,2}(:Piece)
OPTIONAL MATCH home = (p)-[:IN]->(:Chunk)
RETURN hood, home
LIMIT 100
