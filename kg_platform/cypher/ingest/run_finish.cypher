MATCH (r:IngestRun {id: $id})
SET r.finished = datetime(), r.status = $status, r.counts = $counts, r.errors = $errors,
    r.warnings = $warnings,
    r.tokens = $tokens, r.duration_s = $duration_s
