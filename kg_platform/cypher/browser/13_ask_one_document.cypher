// title: Ask one document
// view: table
// layer: corpus
// "Ask this document": the passages of ONE document that best match a question, ranked by BM25
// and filtered to that document inside the query (what `kgp retrieve --scope` and the SDK's
// `retrieve(..., scope=[...])` do for every strategy). Put part of the document's title or path
// and your question between the quotes; an empty question lists the document's passages in order.
WITH '' AS titleContains, '' AS question
MATCH (s:Source)
WHERE toLower(coalesce(s.title, s.uri)) CONTAINS toLower(titleContains)
WITH s, question ORDER BY COUNT { MATCH (c:L2 {source_id: s.id}) } DESC, s.id LIMIT 1
WITH s, trim(reduce(q = question, ch IN ['\\', '+', '-', '!', '(', ')', ':', '^', '[', ']', '"',
                                         '{', '}', '~', '*', '?', '|', '&', '/'] |
                    replace(q, ch, ' '))) AS q
// The document's corpus has its own fulltext index (named for the label its level-2 chunks carry
// beside L2: ck<hash>_L2 -> ck<hash>_chunk_text_l2).
OPTIONAL MATCH (c2:L2 {source_id: s.id})
WITH s, q, head([l IN labels(head(collect(c2))) WHERE l ENDS WITH '_L2']) AS own
WITH s, q, left(own, size(own) - 2) + 'chunk_text_l2' AS ix
CALL (s, q, ix) {
  WITH s, q, ix WHERE q <> '' AND ix IS NOT NULL
  CALL db.index.fulltext.queryNodes(ix, q, {limit: 5000}) YIELD node, score
  WITH node, score WHERE node.source_id = s.id
  RETURN node AS c, score
  ORDER BY score DESC LIMIT 5
  UNION ALL
  WITH s, q WHERE q = ''
  MATCH (s)-[:HAS_SECTION]->+(sec:Section)-[:HAS_CHUNK]->(node:L2)
  RETURN node AS c, null AS score
  ORDER BY sec.ord, node.ord LIMIT 5
}
OPTIONAL MATCH (sec:Section {id: c.section_id})
RETURN s.title AS document, score, coalesce(sec.path, sec.title) AS section, c.id AS chunk_id,
       left(c.text, 200) AS text
