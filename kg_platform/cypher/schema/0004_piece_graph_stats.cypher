// The incremental piece graph (ingest/similar.py): BM25 statistics frozen at a corpus' last full
// piece-graph build, one PieceGraphStats node per corpus and one PieceTerm (document frequency)
// per term, looked up only for the terms of the pieces an incremental run touches. The
// candidate search over a piece's BM25 terms is each corpus's own `piece_terms` index
// (cypher/corpus/indexes.cypher.template).
CREATE CONSTRAINT piece_graph_stats_corpus IF NOT EXISTS FOR (n:PieceGraphStats) REQUIRE n.corpus IS UNIQUE;
CREATE INDEX piece_term_key IF NOT EXISTS FOR (n:PieceTerm) ON (n.corpus, n.term);
