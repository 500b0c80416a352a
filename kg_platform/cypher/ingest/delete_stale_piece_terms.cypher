// Terms of an earlier build that no piece uses any more (their df is 0 now).
MATCH (t:PieceTerm {corpus: $corpus})
WHERE t.build <> $build
DELETE t
