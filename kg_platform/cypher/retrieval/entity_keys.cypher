// Entity-graph retrieval, finding the question's entities: which of the question's candidate
// keys $keys (its word n-grams, normalised) name an entity of $corpus (null: any corpus), with
// that entity's type. The entity_key index answers each lookup.
UNWIND $keys AS key
MATCH (e:Entity {key: key})
WHERE $corpus IS NULL OR e.corpus = $corpus
RETURN key, head(collect(e.type)) AS type
