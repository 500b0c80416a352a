// Every job lock with whether it is held now (by the database clock).
MATCH (l:JobLock)
WHERE $names IS NULL OR l.name IN $names
RETURN l.name AS name, l.owner AS owner, l.expires AS expires, l.acquired AS acquired,
       l.run_id AS run_id, l.last_owner AS last_owner, l.released AS released,
       (l.owner IS NOT NULL AND l.expires >= timestamp()) AS held, timestamp() AS now
ORDER BY name
