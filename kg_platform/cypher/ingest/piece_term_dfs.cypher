UNWIND $terms AS term
MATCH (t:PieceTerm {corpus: $corpus, term: term})
RETURN term, t.df AS df
