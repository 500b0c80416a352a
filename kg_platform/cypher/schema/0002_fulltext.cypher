// Fulltext (Lucene BM25) indexes: none over every corpus. The ones searches use (chunks of each
// level, pieces, tags) are each corpus's own (cypher/corpus/indexes.cypher.template, made when a
// corpus is first written). Graphs made before that also had shared ones, and two that nothing
// read (atomic_question_text, entity_name); `kgp init` drops them
// (graph/corpus_indexes.py: retire_shared_indexes).
