// `kgp lab bench ingest`: the relationships leaving one corpus' nodes, by type (every relationship
// kg-platform writes for a corpus starts at one of these nodes).
CALL () {
  MATCH (n:Source) WHERE n.corpus = $corpus RETURN n
  UNION ALL
  MATCH (n:Section) WHERE n.corpus = $corpus RETURN n
  UNION ALL
  MATCH (n:Chunk) WHERE n.corpus = $corpus RETURN n
  UNION ALL
  MATCH (n:Piece) WHERE n.corpus = $corpus RETURN n
  UNION ALL
  MATCH (n:IngestRun) WHERE n.corpus = $corpus RETURN n
  UNION ALL
  MATCH (n:Corpus {name: $corpus}) RETURN n
}
MATCH (n)-[r]->()
RETURN type(r) AS type, count(r) AS relationships
