// Whether the graph holds the corpus $corpus: its Corpus node (an index seek on the corpus_name
// constraint) or, for a corpus whose node is gone, one source naming it (the source_corpus
// index); each EXISTS stops at the first match, so the cost does not grow with the corpus.
RETURN EXISTS { MATCH (:Corpus {name: $corpus}) }
    OR EXISTS { MATCH (:Source {corpus: $corpus}) } AS found
