// Vector indexes (cosine): none over every corpus. The ones searches use are each corpus's own
// (cypher/corpus/indexes.cypher.template; see 0002_fulltext.cypher), built for the embedder's
// dimension; graphs made before that also had source_embedding, which nothing read (`kgp init`
// drops it). Neo4j returns (1 + cos) / 2 as a score; convert with cos = 2*score - 1.
