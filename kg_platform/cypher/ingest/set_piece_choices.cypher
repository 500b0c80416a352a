// Each piece's chosen SIMILAR neighbours (ids and rounded scores, best first); it is no longer
// pending. (corpus_key: pieces written before the key existed get it at their corpus' next full
// build.)
UNWIND $rows AS row
MATCH (p:Piece {id: row.id})
SET p.sim_choices = row.choices, p.sim_choice_scores = row.scores, p.corpus_key = $corpus_key
REMOVE p:SimPending
