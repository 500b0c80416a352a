// Pieces that must choose their SIMILAR neighbours again: new or replaced ones, and those whose
// chosen neighbour was deleted (both labelled SimPending by the source writer).
MATCH (p:SimPending)
WHERE p.corpus = $corpus
RETURN p.id AS id, p.text AS text, p.sim_choices AS choices, p.sim_choice_scores AS scores
ORDER BY p.id
