// After all sources of a corpus are deleted: its run records and the Corpus node.
OPTIONAL MATCH (r:IngestRun {corpus: $corpus})
DETACH DELETE r
WITH count(*) AS _
MATCH (co:Corpus {name: $corpus})
DETACH DELETE co
