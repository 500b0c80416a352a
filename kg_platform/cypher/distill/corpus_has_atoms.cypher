// Whether any atomic question exists (in $corpus, or anywhere when null).
OPTIONAL MATCH (a:AtomicQuestion)
WHERE $corpus IS NULL OR a.corpus = $corpus
WITH a LIMIT 1
RETURN a IS NOT NULL AS has_atoms
