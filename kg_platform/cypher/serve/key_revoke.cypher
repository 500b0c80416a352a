// Revoke a key by name (`kgp serve keys revoke`): it stays listed, with the time; every
// server stops accepting it when its key ring next refreshes (within a second).
MATCH (k:ApiKey {name: $name})
WITH k, k.revoked_at IS NOT NULL AS already
SET k.revoked_at = coalesce(k.revoked_at, datetime())
RETURN k.name AS name, already, toString(k.revoked_at) AS revoked_at
