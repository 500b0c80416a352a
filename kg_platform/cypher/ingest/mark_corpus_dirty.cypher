// Every write that changes a corpus' pieces runs this first in its own transaction: it takes the
// Corpus node's write lock (so the piece-graph sync and source writers serialise on it) and bumps
// the version the sync compares before it may mark the graph clean.
MERGE (co:Corpus {name: $corpus})
SET co.piece_graph_dirty = true,
    co.piece_graph_version = coalesce(co.piece_graph_version, 0) + 1
