// The subgraph behind retrieval results: every node on their paths and the edges between them.
// Params: $ids (node ids from RetrievedItem.id and .path, then the results' sources, whose
// REFERENCES edges show which result names another's title). Paste into Neo4j Browser after
// `:param ids => [...]` (kgp retrieve --explain prints both).
MATCH (n) WHERE n.id IN $ids
OPTIONAL MATCH r = (n)-[:PART_OF|IN|SIMILAR|HAS_CHUNK|HAS_SECTION|ANSWERED_BY|MENTIONED_IN|REFERENCES]-(m)
WHERE m.id IN $ids
RETURN n, r
