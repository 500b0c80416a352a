// Corpus tags carried by the chunks $ids (auto-tagging step 3: tags of a QA sample's gold chunks).
UNWIND $ids AS id
MATCH (t:Tag)-[:TAGS]->(:Chunk {id: id})
RETURN DISTINCT t.id AS id, t.name AS name, t.class AS class
