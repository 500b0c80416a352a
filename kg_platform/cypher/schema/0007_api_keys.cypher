// API keys of `kgp serve` / `kgp mcp --http`, shared by every server on this database: one
// name per key (revoked keys keep theirs), and one hash per key, whose constraint's backing
// index is what a lookup by hash seeks. The key itself is never stored, only its SHA-256.
CREATE CONSTRAINT api_key_name IF NOT EXISTS FOR (n:ApiKey) REQUIRE n.name IS UNIQUE;
CREATE CONSTRAINT api_key_hash IF NOT EXISTS FOR (n:ApiKey) REQUIRE n.key_hash IS UNIQUE;
