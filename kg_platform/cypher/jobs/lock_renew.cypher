// Extend the lease of a lock we still hold; zero rows back means it was lost (expired + taken).
MATCH (l:JobLock {name: $job})
WHERE l.owner = $owner
SET l.expires = timestamp() + $lease_ms, l.run_id = coalesce($run_id, l.run_id)
RETURN l.expires AS expires
