// After all sources of a corpus are deleted: its run records, its piece-graph statistics and the
// Corpus node.
OPTIONAL MATCH (r:IngestRun {corpus: $corpus})
DETACH DELETE r
WITH count(*) AS _
OPTIONAL MATCH (t:PieceTerm {corpus: $corpus})
DELETE t
WITH count(*) AS _
OPTIONAL MATCH (st:PieceGraphStats {corpus: $corpus})
DELETE st
WITH count(*) AS _
MATCH (co:Corpus {name: $corpus})
DETACH DELETE co
