// `kgp lab bench ingest --peer`: what langchain-neo4j's Neo4jVector stored for one bench run
// (its nodes carry the run id in their metadata property `bench_run`).
MATCH (n:KgpBenchLangChainPeer) WHERE n.bench_run = $run
RETURN count(n) AS nodes, count(n.embedding) AS vectors,
       sum(COUNT { (n)--() }) AS relationships, collect(keys(n))[0] AS properties
