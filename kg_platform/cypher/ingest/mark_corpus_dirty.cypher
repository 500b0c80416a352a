MERGE (co:Corpus {name: $corpus})
SET co.piece_graph_dirty = true
