// The frozen BM25 statistics of a corpus' piece graph and how many pieces it holds now.
OPTIONAL MATCH (st:PieceGraphStats {corpus: $corpus})
RETURN st.n AS n, st.avgdl AS avgdl, st.k_graph AS k_graph, st.t_graph AS t_graph,
       coalesce(st.ready, false) AS ready,
       COUNT { MATCH (p:Piece {corpus: $corpus}) } AS pieces
