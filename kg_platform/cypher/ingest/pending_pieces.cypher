// Pieces that must choose their SIMILAR neighbours again: new or replaced ones, and those whose
// chosen neighbour was deleted (both labelled SimPending by the source writer).
MATCH (p:SimPending)
WHERE p.corpus = $corpus
OPTIONAL MATCH (s:Source {id: p.source_id})
RETURN p.id AS id, p.text AS text, p.sim_choices AS choices, p.sim_choice_scores AS scores,
       s.sha256 AS sha256, p.doc_ord AS doc_ord
ORDER BY p.id
