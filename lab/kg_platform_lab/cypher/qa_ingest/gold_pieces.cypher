// Pieces of the given sources that contain a given sentence index: maps gold supporting facts
// (source uri, sentence index) to piece ids.
UNWIND $facts AS fact
MATCH (s:Source {id: fact.source_id})-[:HAS_SECTION*1..]->(:Section)-[:HAS_CHUNK]->(:L1)<-[:IN]-(p:Piece)
WHERE fact.sentence IN p.sentences
RETURN fact.key AS key, collect(p.id) AS pieces
