// A corpus's sections without a label scan: `kgp corpus list` counts every corpus's sections
// (corpus/counts), as chunk_corpus, piece_corpus and source_corpus do for the other labels.
CREATE INDEX section_corpus IF NOT EXISTS FOR (n:Section) ON (n.corpus);
