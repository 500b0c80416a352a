// Backfill (graph/corpus_indexes.py): give a corpus's existing nodes the labels its own indexes
// cover ($ix: the corpus's checked key prefix, "ck<24 hex>_"; a dynamic label, Cypher 5.26),
// as the writers do for new ones. Idempotent; batched, so it runs in an implicit transaction.
MATCH (n:Chunk {corpus: $corpus}) WHERE n.level >= 1 AND n.level <= 6
CALL (n) { SET n:$($ix + 'L' + toString(n.level)) } IN TRANSACTIONS OF 5000 ROWS;
MATCH (n:Piece {corpus: $corpus})
CALL (n) { SET n:$($ix + 'Piece') } IN TRANSACTIONS OF 5000 ROWS;
MATCH (n:Section {corpus: $corpus})
CALL (n) { SET n:$($ix + 'Section') } IN TRANSACTIONS OF 5000 ROWS;
MATCH (n:AtomicQuestion) WHERE n.corpus = $corpus
CALL (n) { SET n:$($ix + 'AtomicQuestion') } IN TRANSACTIONS OF 5000 ROWS;
MATCH (n:Entity) WHERE n.corpus = $corpus
CALL (n) { SET n:$($ix + 'Entity') } IN TRANSACTIONS OF 5000 ROWS;
MATCH (n:Tag) WHERE n.corpus = $corpus
CALL (n) { SET n:$($ix + 'Tag') } IN TRANSACTIONS OF 5000 ROWS;
