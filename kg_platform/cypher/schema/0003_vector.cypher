// Vector indexes (cosine) over every corpus; the ones searches use are each corpus's own
// (cypher/corpus/indexes.cypher.template; see 0002_fulltext.cypher). {dimension} is replaced by
// the embedder's dimension (an integer the platform reads from the model, never user text):
// index OPTIONS cannot take parameters. Neo4j returns (1 + cos) / 2 as the score; convert with
// cos = 2*score - 1.
CREATE VECTOR INDEX source_embedding IF NOT EXISTS FOR (n:Source) ON n.embedding OPTIONS {indexConfig: {`vector.dimensions`: {dimension}, `vector.similarity_function`: 'cosine'}};
