// Every node of one corpus with its labels and properties (`kgp lab graph-fingerprint`): the
// nodes that carry the corpus's name, and its Corpus node. A lab tool, so a whole-label scan
// is fine; operational records (IngestRun) are left out, they hold times and process ids.
MATCH (n)
WHERE (n.corpus = $corpus AND NOT n:IngestRun) OR (n:Corpus AND n.name = $corpus)
RETURN elementId(n) AS eid, labels(n) AS labels, properties(n) AS props
