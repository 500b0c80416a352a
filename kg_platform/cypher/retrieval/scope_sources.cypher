// Resolve a document scope: each value in $values may be a source id, a title (any case), a
// path (the Source uri), a file name or a file name without its extension. $corpus (null = every
// corpus) narrows the match. One row per value that matched, with the ids it matched.
UNWIND $values AS value
MATCH (s:Source)
WHERE ($corpus IS NULL OR s.corpus = $corpus)
  AND (s.id = value
       OR toLower(s.title) = toLower(value)
       OR s.uri = value
       OR s.uri ENDS WITH '/' + value
       OR toLower(last(split(s.uri, '/'))) = toLower(value)
       OR toLower(last(split(s.uri, '/'))) STARTS WITH toLower(value) + '.'
          AND NOT substring(last(split(s.uri, '/')), size(value) + 1) CONTAINS '.')
WITH value, s ORDER BY s.id
RETURN value, collect(s.id) AS ids, collect(s.title) AS titles
