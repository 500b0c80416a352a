// Ask a running ingestion run to stop (any process on this database may): the run reads the
// time between files (ingest/run_cancel_requested) and ends as 'cancelled'. A run that already
// ended is left as it is; no row when there is no run with this id.
MATCH (r:IngestRun {id: $id})
SET r.cancel_requested = CASE
  WHEN r.status = 'running' THEN coalesce(r.cancel_requested, datetime())
  ELSE r.cancel_requested
END
RETURN r.id AS id, r.status AS status
