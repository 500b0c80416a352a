MATCH (st:PieceGraphStats {corpus: $corpus, build: $build})
SET st.ready = true, st.built_at = datetime()
