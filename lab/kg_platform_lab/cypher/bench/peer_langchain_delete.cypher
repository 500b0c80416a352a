// `kgp lab bench ingest --peer`: remove one bench run's peer nodes; returns how many of the label are
// left (the caller drops the peer's index and constraint when none is).
MATCH (n:KgpBenchLangChainPeer) WHERE n.bench_run = $run
DETACH DELETE n
WITH count(*) AS deleted
OPTIONAL MATCH (m:KgpBenchLangChainPeer)
RETURN deleted, count(m) AS left
