// The corpus a source belongs to (null when the source node is already gone).
OPTIONAL MATCH (s:Source {id: $source_id})
RETURN s.corpus AS corpus
