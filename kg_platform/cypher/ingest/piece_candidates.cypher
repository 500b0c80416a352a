// For each pending piece, the pieces of its corpus sharing its terms (fulltext BM25, $limit of
// them; row.q = "+corpus_key:<key> +terms:(<terms>)"), with their stored choices: the only pieces
// the incremental update compares it with.
UNWIND $rows AS row
CALL (row) {
  CALL db.index.fulltext.queryNodes('piece_terms', row.q, {limit: $limit}) YIELD node
  WITH node
  WHERE node.corpus = $corpus
  RETURN collect({id: node.id, text: node.text, choices: node.sim_choices,
                  scores: node.sim_choice_scores}) AS candidates
}
RETURN row.id AS id, candidates
