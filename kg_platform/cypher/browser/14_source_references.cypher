// title: Sources that name each other (REFERENCES)
// view: graph
// layer: information resources
// A source whose text names another source's title refers to it: REFERENCES edges, found at
// ingestion without an LLM (title matching, ingest/title_match.py; `mentions` says how often).
// This is the best-connected source with what it names and what names it. Put a word between
// the quotes to choose the source by its title.
WITH '' AS titleContains
MATCH (s:Source)-[:REFERENCES]-()
WHERE s.title CONTAINS titleContains
WITH s, count(*) AS degree ORDER BY degree DESC, s.id LIMIT 1
MATCH refs = (s)-[:REFERENCES]-(:Source)
RETURN refs
LIMIT 100
