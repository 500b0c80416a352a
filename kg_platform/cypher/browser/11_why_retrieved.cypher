// title: Why was this chunk retrieved?
// view: table
// layer: answers
// The evidence of one answer: the chunks it used in order, how each was found (strategy, score
// and per-level or per-layer breakdown when recorded), where it sits and which atomic questions
// lead to it. Put an answer id (trajectory_id of `kgp ask --json` or of the SDK) between the
// quotes; empty = the latest answer.
WITH '' AS answerId
MATCH (t:Trajectory)
WHERE answerId = '' OR t.id = answerId
WITH t ORDER BY t.created DESC LIMIT 1
MATCH (t)-[ch:CHOSE]->(c:Chunk)
OPTIONAL MATCH (src:Source {id: c.source_id})
OPTIONAL MATCH (sec:Section {id: c.section_id})
RETURN t.id AS answer_id, t.question AS question, ch.round AS rank, c.id AS chunk_id,
       c.level AS level, ch.strategy AS found_by, ch.score AS score, ch.breakdown AS breakdown,
       src.title AS source, coalesce(sec.path, sec.title) AS section, c.page_start AS page,
       COLLECT { MATCH (q:AtomicQuestion)-[:ANSWERED_BY]->(c) RETURN q.text LIMIT 3 } AS via_questions,
       left(c.text, 160) AS text
ORDER BY rank
