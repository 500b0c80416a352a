// Where each reranked chunk sits in its document, for the document rerank
// (kg_platform/retrieval/rerank/structure.py). $ids are item ids; a chunk with a section gives one
// row: its place in its section (ord), its section, its length in tokens, the section's place in
// the document (sord), how many chunks of the chunk's level the section holds (section_chunks)
// and the last section place of its document (last_sord). Other ids (pieces, chunks without a
// section) are absent.
UNWIND $ids AS id
MATCH (c:Chunk {id: id})
MATCH (s:Section {id: c.section_id})
CALL (s, c) {
  MATCH (s)-[:HAS_CHUNK]->(x:Chunk)
  WHERE x.level = c.level
  RETURN count(x) AS section_chunks
}
CALL (c) {
  MATCH (:Source {id: c.source_id})-[:HAS_SECTION*1..]->(t:Section)
  RETURN max(t.ord) AS last_sord
}
RETURN id, c.ord AS ord, c.section_id AS section, c.tokens AS tokens, s.ord AS sord,
       section_chunks, last_sord
