MATCH (co:Corpus {name: $corpus})
SET co.piece_graph_dirty = false, co.piece_graph_updated = datetime(),
    co.piece_graph_edges = coalesce(co.piece_graph_edges, 0) + $delta
