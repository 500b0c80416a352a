// Drop everything distilled from the sources $source_ids (before they are re-written or pruned):
// atomic questions of their chunks, the relations they evidenced, entity mentions and tags on
// their chunks, entities and tags left with no mention/chunk, and the chunks' markers. Starts
// from the Source node and walks its sections, so it touches only that source's subgraph.
UNWIND $source_ids AS sid
MATCH (s:Source {id: sid})
OPTIONAL MATCH (s)-[:HAS_SECTION*1..]->(:Section)-[:HAS_CHUNK]->(c:Chunk)
WITH sid, collect(DISTINCT c) AS chunks
CALL (chunks) {
  UNWIND chunks AS c
  MATCH (q:AtomicQuestion)-[:ANSWERED_BY]->(c)
  DETACH DELETE q
  RETURN count(*) AS atoms
}
CALL (chunks) {
  UNWIND chunks AS c
  MATCH (e:Entity)-[:MENTIONED_IN]->(c)
  RETURN collect(DISTINCT e) AS ents
}
CALL (sid, ents) {
  UNWIND ents AS e
  MATCH (e)-[r:RELATES]->(:Entity)
  WHERE r.source_id = sid
  DELETE r
  RETURN count(*) AS relations
}
CALL (chunks) {
  UNWIND chunks AS c
  MATCH (:Entity)-[m:MENTIONED_IN]->(c)
  DELETE m
  RETURN count(*) AS mentions
}
CALL (chunks) {
  UNWIND chunks AS c
  MATCH (t:Tag)-[x:TAGS]->(c)
  DELETE x
  RETURN collect(DISTINCT t) AS tag_nodes, count(*) AS tags
}
CALL (ents) {
  UNWIND ents AS e
  WITH e WHERE NOT (e)-[:MENTIONED_IN]->()
  DETACH DELETE e
  RETURN count(*) AS entities_removed
}
CALL (tag_nodes) {
  UNWIND tag_nodes AS t
  WITH t WHERE NOT (t)-[:TAGS]->()
  DETACH DELETE t
  RETURN count(*) AS tags_removed
}
CALL (chunks) {
  UNWIND chunks AS c
  REMOVE c.atomic_v, c.entities_v, c.tags_v
}
RETURN sum(atoms) AS atoms, sum(relations) AS relations, sum(mentions) AS mentions,
       sum(tags) AS tags, sum(entities_removed) AS entities_removed,
       sum(tags_removed) AS tags_removed
