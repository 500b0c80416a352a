// Fulltext (Lucene BM25) indexes over every corpus. The ones searches use (chunks of each level,
// pieces, tags) are each corpus's own (cypher/corpus/indexes.cypher.template, made when a corpus
// is first written): graphs made before that also had shared ones, which `kgp init` drops
// (graph/corpus_indexes.py: retire_shared_indexes).
CREATE FULLTEXT INDEX atomic_question_text IF NOT EXISTS FOR (n:AtomicQuestion) ON EACH [n.text];
CREATE FULLTEXT INDEX entity_name IF NOT EXISTS FOR (n:Entity) ON EACH [n.name];
