// Every relationship leaving a node of one corpus (or its Corpus node), with both ends' element
// ids (mapped to content keys by the caller) and its properties. IngestRun edges are left out.
MATCH (n)-[r]->(m)
WHERE ((n.corpus = $corpus AND NOT n:IngestRun) OR (n:Corpus AND n.name = $corpus))
  AND NOT m:IngestRun
RETURN elementId(n) AS start, type(r) AS type, elementId(m) AS end, properties(r) AS props
