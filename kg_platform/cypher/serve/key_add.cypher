// A new API key (`kgp serve keys add`): its name, the SHA-256 of the key, its corpus patterns
// and its right. The name and hash constraints refuse a duplicate.
CREATE (k:ApiKey {
  name: $name, key_hash: $key_hash, corpora: $corpora, rights: $rights,
  created: datetime()
})
RETURN k.name AS name, toString(k.created) AS created
