// Store one retrieval as an answer record: (:Trajectory {kind: 'retrieve'})-[:CHOSE]->(:Chunk)
// with rank, score, breakdown (JSON), path and the named query that found each item. A piece
// item points at its level-1 chunk. Read by the Browser guide's "why was this retrieved".
CREATE (t:Trajectory {id: $id, kind: 'retrieve', question: $question, corpus: $corpus,
                      strategy: $strategy, created: $created, rounds: 0, answer: '',
                      steps: '[]'})
WITH t
UNWIND $items AS it
OPTIONAL MATCH (c:Chunk {id: it.id})
OPTIONAL MATCH (p:Piece {id: it.id})
OPTIONAL MATCH (pc:Chunk {id: p.chunk_id})
WITH t, it, coalesce(c, pc) AS chunk
WHERE chunk IS NOT NULL
MERGE (t)-[r:CHOSE {round: it.rank}]->(chunk)
SET r.score = it.score, r.breakdown = it.breakdown, r.path = it.path, r.query = it.query,
    r.strategy = $strategy, r.item_id = it.id
RETURN count(r) AS edges
