// Mappings learnt earlier for query tags $keys: (:Tag {class:'query'})-[:MAPS_TO]->(:Tag).
UNWIND $keys AS key
MATCH (q:Tag {id: $prefix + key})-[m:MAPS_TO]->(t:Tag)
RETURN key, t.id AS id, t.name AS name, t.class AS class, m.confidence AS confidence
