// Every API key, revoked ones included (`kgp serve keys list`); never the hash.
MATCH (k:ApiKey)
RETURN k.name AS name, k.corpora AS corpora, k.rights AS rights,
       toString(k.created) AS created, toString(k.revoked_at) AS revoked_at
ORDER BY k.name
