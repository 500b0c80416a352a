// Give the lock back (only if we still hold it). The node stays so `kgp jobs status` can show
// the last holder and when it let go.
MATCH (l:JobLock {name: $job})
WHERE l.owner = $owner
SET l.owner = null, l.expires = 0, l.released = timestamp(), l.last_owner = $owner
RETURN l.name AS name
