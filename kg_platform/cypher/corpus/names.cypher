// Every corpus name in the graph: Corpus nodes, and corpus names found on sources (a source
// whose Corpus node is gone still makes its corpus visible, so it can be listed and dropped).
// The second branch reads Source.corpus from the source_corpus index.
CALL () {
  MATCH (co:Corpus)
  RETURN co.name AS name
  UNION
  MATCH (s:Source)
  WHERE s.corpus IS NOT NULL
  RETURN DISTINCT s.corpus AS name
}
WITH name
WHERE name IS NOT NULL
RETURN name
ORDER BY name
