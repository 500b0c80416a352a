// Every corpus name that has ingestion runs (a dropped corpus's runs stay): matched against a
// key's corpus patterns before its runs are listed.
MATCH (r:IngestRun)
WHERE r.corpus IS NOT NULL
RETURN DISTINCT r.corpus AS name
