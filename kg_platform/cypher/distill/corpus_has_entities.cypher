// Whether the corpus has any entity (entity resolution searches its own new entities, not the
// vector index, when it had none before the run).
RETURN EXISTS { MATCH (e:Entity) WHERE e.corpus = $corpus } AS has_entities
