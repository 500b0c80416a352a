// A corpus's sources without a label scan: MoGG's `auto` hops read the length of the documents
// a query searches (retrieval/median_source_tokens), once per retrieval context.
CREATE INDEX source_corpus IF NOT EXISTS FOR (n:Source) ON (n.corpus);
