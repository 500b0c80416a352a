// `kgp lab bench ingest`: the nodes one corpus stores, grouped by their labels, and how many carry a
// vector. (Labels cannot be parameters, hence one branch per label a corpus writes.)
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
RETURN labels(n) AS labels, count(n) AS nodes, count(n.embedding) AS vectors
