// Each piece's chosen SIMILAR neighbours (ids and rounded scores, best first); it is no longer
// pending.
UNWIND $rows AS row
MATCH (p:Piece {id: row.id})
SET p.sim_choices = row.choices, p.sim_choice_scores = row.scores
REMOVE p:SimPending
