// Compare-and-set acquisition of a job lock, atomic across processes and machines.
// MERGE on the unique name creates or finds the lock; the SET takes the node's write lock
// BEFORE owner/expires are read, so two contenders are serialised and only one can win.
// Time is the database's clock (timestamp(), ms), the one clock all holders share.
MERGE (l:JobLock {name: $job})
SET l.contended = timestamp()
WITH l, timestamp() AS now
WITH l, now, (l.owner IS NULL OR l.owner = $owner OR coalesce(l.expires, 0) < now) AS free
SET l.owner = CASE WHEN free THEN $owner ELSE l.owner END,
    l.expires = CASE WHEN free THEN now + $lease_ms ELSE l.expires END,
    l.acquired = CASE WHEN free THEN now ELSE l.acquired END,
    l.run_id = CASE WHEN free THEN null ELSE l.run_id END
RETURN free AS acquired, l.owner AS owner, l.expires AS expires, now
