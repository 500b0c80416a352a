MATCH (co:Corpus {name: $corpus})
RETURN co.piece_graph_dirty AS dirty, coalesce(co.piece_graph_version, 0) AS version
