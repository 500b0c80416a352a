// For each pending piece, the pieces of its corpus sharing its terms (fulltext BM25, $limit of
// them; row.q = "+corpus_key:<key> +terms:(<terms>)"), with their stored choices and what orders
// each of those by content (a tie between equal scores is broken by content, never by id): the
// only pieces the incremental update compares it with.
// $ix: prefix of the searched corpus's own index names ('' = the indexes shared by every corpus;
// graph/corpus_indexes.py: a corpus's own indexes keep its scores free of the other corpora).
UNWIND $rows AS row
CALL (row) {
  CALL db.index.fulltext.queryNodes($ix + 'piece_terms', row.q, {limit: $limit}) YIELD node
  WITH node
  WHERE node.corpus = $corpus
  OPTIONAL MATCH (s:Source {id: node.source_id})
  CALL (node) {
    UNWIND coalesce(node.sim_choices, []) AS cid
    MATCH (q:Piece {id: cid})
    OPTIONAL MATCH (qs:Source {id: q.source_id})
    RETURN collect({id: cid, text: q.text, doc_ord: q.doc_ord, sha256: qs.sha256}) AS chosen
  }
  RETURN collect({id: node.id, text: node.text, choices: node.sim_choices,
                  scores: node.sim_choice_scores, sha256: s.sha256, doc_ord: node.doc_ord,
                  choice_order: chosen}) AS candidates
}
RETURN row.id AS id, candidates
