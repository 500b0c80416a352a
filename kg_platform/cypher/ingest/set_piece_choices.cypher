// Each piece's chosen SIMILAR neighbours (ids and rounded scores, best first); it is no longer
// pending. (terms, corpus_key: pieces written before they existed get them at their corpus' next
// full build.)
UNWIND $rows AS row
MATCH (p:Piece {id: row.id})
SET p.sim_choices = row.choices, p.sim_choice_scores = row.scores, p.corpus_key = $corpus_key,
    p.terms = coalesce(row.terms, p.terms)
REMOVE p:SimPending
