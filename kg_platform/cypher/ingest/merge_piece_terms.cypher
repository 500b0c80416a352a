UNWIND $rows AS row
MERGE (t:PieceTerm {corpus: $corpus, term: row.term})
SET t.df = row.df, t.build = $build
