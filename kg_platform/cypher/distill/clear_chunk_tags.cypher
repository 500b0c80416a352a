// Before (re-)tagging chunks $ids: drop their TAGS edges (orphan tags are swept afterwards).
UNWIND $ids AS id
MATCH (:Tag)-[t:TAGS]->(:Chunk {id: id})
DELETE t
