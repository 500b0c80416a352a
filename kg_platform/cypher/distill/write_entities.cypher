// Knowledge-graph distillation: entities (MERGE on the resolved id) and their mentions.
// $rows: {id, key, name, type, description, corpus, embedding, alias, chunk_id, by}. `by` is the
// extractor ('llm' | 'nlp'), kept on the entity that created the node and on every mention. `alias` is the
// surface name when it resolved onto an entity with another normalised name (else null). $ix: the
// corpus's checked key prefix, for its own label (graph/corpus_indexes.py).
UNWIND $rows AS row
MERGE (e:Entity {id: row.id})
ON CREATE SET e.key = row.key, e.name = row.name, e.type = row.type, e.corpus = row.corpus,
              e.description = row.description, e.aliases = [], e.by = row.by
SET e:$($ix + 'Entity')
WITH e, row
CALL (e, row) {
  WITH e, row WHERE e.embedding IS NULL AND row.embedding IS NOT NULL
  CALL db.create.setNodeVectorProperty(e, 'embedding', row.embedding)
}
WITH e, row
SET e.aliases = CASE WHEN row.alias IS NULL OR row.alias IN e.aliases OR row.alias = e.name
                     THEN e.aliases ELSE e.aliases + row.alias END
WITH e, row
MATCH (c:Chunk {id: row.chunk_id})
MERGE (e)-[m:MENTIONED_IN]->(c)
SET m.by = row.by
