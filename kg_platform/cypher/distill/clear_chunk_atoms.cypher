// Remove the atomic questions of chunks about to be (re-)atomized ($ids).
UNWIND $ids AS id
MATCH (q:AtomicQuestion)-[:ANSWERED_BY]->(:Chunk {id: id})
DETACH DELETE q
