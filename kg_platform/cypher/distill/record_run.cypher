// `kgp ingest --distill`: the distillation's LLM tokens join the ingestion run's record.
MATCH (r:IngestRun {id: $id})
SET r.tokens = coalesce(r.tokens, 0) + $tokens, r.distill = $distill
