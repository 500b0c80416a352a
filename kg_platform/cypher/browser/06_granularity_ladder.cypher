// title: The granularity ladder of one passage
// view: graph
// layer: corpus
// A level-1 chunk, every coarser chunk it is PART_OF up to the top level, and the sentence
// pieces IN it. Put a word from the text between the quotes to choose the passage.
WITH '' AS textContains
MATCH (c:L1)
WHERE c.text CONTAINS textContains AND EXISTS { (c)-[:PART_OF]->() }
WITH c ORDER BY c.source_id, c.ord LIMIT 1
MATCH ladder = (c)-[:PART_OF]->*(top:Chunk)
WHERE NOT EXISTS { (top)-[:PART_OF]->() }
OPTIONAL MATCH pieces = (:Piece)-[:IN]->(c)
RETURN ladder, pieces
