// After all sources of a corpus are deleted: its run records, its piece-graph statistics, its
// trained routers (so a corpus ingested again under the same name starts without a router
// trained on the old data; their artifact folders under data_dir/routers/ stay on disk) and the
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
OPTIONAL MATCH (ro:Router {corpus: $corpus})
DETACH DELETE ro
WITH count(*) AS _
MATCH (co:Corpus {name: $corpus})
DETACH DELETE co
