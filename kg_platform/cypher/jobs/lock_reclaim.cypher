// Take over a lock whose holder is known to be dead (a process of this host that no longer
// runs). Compare-and-set on the dead owner, so if anyone else took or released it meanwhile
// nothing changes and zero rows come back.
MATCH (l:JobLock {name: $job})
WHERE l.owner = $dead
WITH l, timestamp() AS now
SET l.owner = $owner, l.expires = now + $lease_ms, l.acquired = now, l.run_id = null,
    l.reclaimed_from = $dead
RETURN l.owner AS owner, l.expires AS expires, now
