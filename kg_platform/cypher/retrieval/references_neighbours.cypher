// The REFERENCES hop (retrieval/strategies/references_hop.py): for each of the walk's top chunks
// (rows: {parent: chunk id, source: its source id}), the sources its source names or is named
// by (most mentions first, $per of them, none already among the results: $have), each with its
// first finest-level chunk.
UNWIND $rows AS row
CALL (row) {
  MATCH (:Source {id: row.source})-[r:REFERENCES]-(n:Source)
  WHERE n.corpus = $corpus AND NOT n.id IN $have
  WITH n, sum(r.mentions) AS m
  ORDER BY m DESC, n.sha256, n.uri, n.id  // ties by content, not by id (ids hash the corpus)
  LIMIT $per
  CALL (n) {
    MATCH (n)-[:HAS_SECTION*1..]->(:Section)-[:HAS_CHUNK]->(c:Chunk {level: 1})
    RETURN c ORDER BY c.ord, c.id LIMIT 1
  }
  RETURN n, c, m
}
OPTIONAL MATCH (sec:Section {id: c.section_id})
RETURN row.parent AS parent, c.id AS id, c.text AS text, c.level AS level, n.id AS source_id,
       n.title AS source_title, sec.title AS section_title, c.page_start AS page,
       c.tokens AS tokens, m AS mentions
