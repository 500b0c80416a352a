// MoGG pieces, each IN its level-1 chunk, with their vector and their corpus's own label ($ix +
// 'Piece', graph/corpus_indexes.py); new pieces are SimPending (they
// choose their SIMILAR neighbours at the next piece-graph sync).
UNWIND $rows AS row
MERGE (p:Piece {id: row.id})
SET p += row.props, p.terms = row.terms, p.corpus_key = $corpus_key, p:SimPending, p:$($ix + 'Piece')
WITH p, row
CALL db.create.setNodeVectorProperty(p, 'embedding', row.embedding)
WITH p, row
MATCH (c:Chunk {id: row.chunk_id})
MERGE (p)-[:IN]->(c)
