// The keys in force, with their hashes: what each server's key ring caches (for at most
// half a second) and checks a request's key against.
MATCH (k:ApiKey)
WHERE k.revoked_at IS NULL AND k.key_hash IS NOT NULL
RETURN k.name AS name, k.key_hash AS key_hash, k.corpora AS corpora, k.rights AS rights
