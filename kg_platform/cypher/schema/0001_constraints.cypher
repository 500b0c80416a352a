// Uniqueness constraints on every id (ids are content hashes, so re-ingesting is a MERGE). Each creates a backing range index.
CREATE CONSTRAINT corpus_name IF NOT EXISTS FOR (n:Corpus) REQUIRE n.name IS UNIQUE;
CREATE CONSTRAINT source_id IF NOT EXISTS FOR (n:Source) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT section_id IF NOT EXISTS FOR (n:Section) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT chunk_id IF NOT EXISTS FOR (n:Chunk) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT piece_id IF NOT EXISTS FOR (n:Piece) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT atomic_question_id IF NOT EXISTS FOR (n:AtomicQuestion) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT entity_id IF NOT EXISTS FOR (n:Entity) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT tag_id IF NOT EXISTS FOR (n:Tag) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT ingest_run_id IF NOT EXISTS FOR (n:IngestRun) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT router_id IF NOT EXISTS FOR (n:Router) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT trajectory_id IF NOT EXISTS FOR (n:Trajectory) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT job_lock_name IF NOT EXISTS FOR (n:JobLock) REQUIRE n.name IS UNIQUE;
CREATE CONSTRAINT migration_version IF NOT EXISTS FOR (n:SchemaMigration) REQUIRE n.version IS UNIQUE;
CREATE INDEX chunk_level IF NOT EXISTS FOR (n:Chunk) ON (n.level);
CREATE INDEX chunk_corpus IF NOT EXISTS FOR (n:Chunk) ON (n.corpus);
CREATE INDEX piece_corpus IF NOT EXISTS FOR (n:Piece) ON (n.corpus);
CREATE INDEX source_uri IF NOT EXISTS FOR (n:Source) ON (n.uri);
CREATE INDEX entity_key IF NOT EXISTS FOR (n:Entity) ON (n.key);
