// The incremental piece graph (ingest/similar.py): BM25 statistics frozen at a corpus' last full
// piece-graph build, one PieceGraphStats node per corpus and one PieceTerm (document frequency)
// per term, looked up only for the terms of the pieces an incremental run touches.
CREATE CONSTRAINT piece_graph_stats_corpus IF NOT EXISTS FOR (n:PieceGraphStats) REQUIRE n.corpus IS UNIQUE;
CREATE INDEX piece_term_key IF NOT EXISTS FOR (n:PieceTerm) ON (n.corpus, n.term);
// The incremental update's candidate search: a piece's BM25 terms (Piece.terms, the piece graph's
// own tokens joined by spaces, so Lucene sees exactly the terms the scores use: the standard
// analyzer keeps "lulu.com" whole where the piece graph has "lulu" and "com"), inside its own
// corpus (Piece.corpus_key, one token per corpus, required in the query).
CREATE FULLTEXT INDEX piece_terms IF NOT EXISTS FOR (n:Piece) ON EACH [n.terms, n.corpus_key]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'whitespace'}};
