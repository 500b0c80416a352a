MATCH (co:Corpus {name: $corpus})
RETURN co.piece_graph_dirty AS dirty
