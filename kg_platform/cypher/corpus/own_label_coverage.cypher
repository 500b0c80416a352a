// How many of a corpus's chunks carry its own level label ($ix + 'L<g>', graph/corpus_indexes.py):
// its own indexes answer for the corpus only when all do (a node written by something other than
// the platform's writers, or by a version before corpora had their own indexes, lacks it).
MATCH (c:Chunk {corpus: $corpus})
RETURN count(c) AS chunks,
       count(CASE WHEN ($ix + 'L' + toString(c.level)) IN labels(c) THEN 1 END) AS labelled
