// Before sources' pieces are deleted (replace or prune): the pieces sharing a SIMILAR edge with
// them that stay must choose again (SimPending), and the corpus' edge count loses those edges.
UNWIND $source_ids AS sid
MATCH (:Source {id: sid})-[:HAS_SECTION*1..]->(:Section)-[:HAS_CHUNK]->(:Chunk)<-[:IN]-(p:Piece)
WITH collect(DISTINCT p) AS doomed
CALL (doomed) {
  UNWIND doomed AS p
  MATCH (p)-[r:SIMILAR]-(nb:Piece)
  RETURN collect(DISTINCT r) AS rels, collect(DISTINCT nb) AS neighbours
}
FOREACH (nb IN [x IN neighbours WHERE NOT x IN doomed] | SET nb:SimPending)
WITH doomed, rels
WHERE size(doomed) > 0
MATCH (co:Corpus {name: head(doomed).corpus})
SET co.piece_graph_edges = coalesce(co.piece_graph_edges, 0) - size(rels)
