// Whether someone asked this run to stop (ingest/run_cancel): polled by the run between files.
MATCH (r:IngestRun {id: $id})
RETURN r.cancel_requested IS NOT NULL AS requested
