// First statement of the piece-graph apply transaction: writing the Corpus node takes its lock,
// held until commit, so no source write can land between this version read and the commit.
MATCH (co:Corpus {name: $corpus})
SET co.piece_graph_checked_at = datetime()
RETURN coalesce(co.piece_graph_version, 0) AS version
