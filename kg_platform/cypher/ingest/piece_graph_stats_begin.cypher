// A full piece-graph build starts: its statistics are not usable until the build's last batch.
MERGE (st:PieceGraphStats {corpus: $corpus})
SET st.ready = false, st.n = $n, st.avgdl = $avgdl, st.k_graph = $k_graph,
    st.t_graph = $t_graph, st.build = $build
