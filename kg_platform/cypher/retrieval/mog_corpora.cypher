// Names of every corpus (MoG's K_1..K_k) that holds level-1 chunks.
MATCH (c:Corpus)
WHERE EXISTS { MATCH (:L1 {corpus: c.name}) }
RETURN c.name AS corpus ORDER BY corpus
