"""Query-aware entity -> chunk transitions: an entity passes its mass to its chunks in proportion
to exp(cos(question, chunk) / tau) instead of equally; the -hub variants also let entities of up
to 100 / 400 chunks pass mass. The walk alone (no selection): share of gold paragraphs in its top
5 / 8 / 12, questions 1-50 / 51-100. Question seeds are cached in /tmp.

Run from the repo root:
python lab/results/2026-11-27/musique-probes/query_aware_walk.py DATASET [VARIANT,...]"""

import json
import sys
import pickle
from pathlib import Path
import kg_platform
from kg_platform.retrieval.entity import EntityStrategy
from kg_platform.sdk import KnowledgePlatform

SHIPPED = (Path(kg_platform.__file__).parent / "cypher/retrieval/entity_ppr.cypher").read_text()
OLD = """  MATCH (n)-[:MENTIONED_IN]-(m)
  WITH n, s, m, CASE WHEN n:Chunk THEN COUNT { (m)-[:MENTIONED_IN]-() } END AS bridges
  WHERE n:Entity OR (1 < bridges AND bridges <= $max_degree)
  WITH n, s, collect(m) AS next
  UNWIND next AS m
  WITH m, sum(s / size(next)) AS s ORDER BY s DESC LIMIT $width"""
assert SHIPPED.count(OLD) == 3
NEW = """  MATCH (n)-[:MENTIONED_IN]-(m)
  WITH n, s, m, CASE WHEN n:Chunk THEN COUNT { (m)-[:MENTIONED_IN]-() } END AS bridges
  WHERE n:Entity OR (1 < bridges AND bridges <= $max_degree)
  WITH n, s, m, CASE WHEN n:Entity THEN exp((2 * vector.similarity.cosine(m.embedding, $qv) - 1) / $tau) ELSE 1.0 END AS a
  WITH n, s, collect({m: m, a: a}) AS next
  WITH n, s, next, reduce(t = 0.0, x IN next | t + x.a) AS tot
  UNWIND next AS x
  WITH x.m AS m, sum(s * x.a / tot) AS s ORDER BY s DESC LIMIT $width"""
Q = SHIPPED.replace(OLD, NEW)
HUBS = Q.replace(
    "WHERE deg > 0 AND (NOT n:Entity OR deg <= $max_degree)",
    "WHERE deg > 0 AND (NOT n:Entity OR deg <= $hub_degree)",
).replace(
    "WHERE n:Entity OR (1 < bridges AND bridges <= $max_degree)",
    "WHERE n:Entity OR (1 < bridges AND bridges <= $hub_degree)",
)
KS = (5, 8, 12)
variants = {"shipped": (SHIPPED, {})}
for tau in (0.05, 0.1, 0.2):
    variants[f"tau{tau}"] = (Q, {"tau": tau})
for tau in (0.05, 0.1):
    for hd in (100, 400):
        variants[f"tau{tau}-hub{hd}"] = (HUBS, {"tau": tau, "hub_degree": hd})
only = sys.argv[2].split(",") if len(sys.argv) > 2 else None


def main(dataset):
    corpus = f"qa-{dataset}"
    questions = [json.loads(line) for line in open(f"../shared/bench/dev/{dataset}.jsonl")]
    kp = KnowledgePlatform.from_env()
    ctx = kp.retrieval_context(corpus)
    strategy = EntityStrategy(ctx)
    cfg = ctx.settings.entity_graph
    cache = Path(f"/tmp/kgp-seeds-{dataset}.pkl")
    if cache.exists():
        seeds = pickle.loads(cache.read_bytes())
    else:
        seeds = {q["id"]: strategy.seeds(q["question"]) for q in questions}
        cache.write_bytes(pickle.dumps(seeds))
    for name, (query, extra) in variants.items():
        if only and name not in only:
            continue
        found = {k: [0, 0, 0, 0] for k in KS}
        for i, q in enumerate(questions):
            gold = {f[0] for f in q["supporting_facts"]}
            qv, seed_rows = seeds[q["id"]]
            records = kp.graph.driver.execute_query(
                query,
                seeds=[{"id": s["id"], "w": s["w"]} for s in seed_rows],
                qv=qv,
                fetch=ctx.index_fetch(max(cfg.chunk_seeds, 1), cfg.fetch),
                k_seed=cfg.chunk_seeds,
                corpus=corpus,
                chunk_weight=cfg.chunk_weight,
                damping=cfg.damping,
                max_degree=cfg.max_degree,
                width=cfg.width,
                k=max(KS),
                **extra,
            ).records
            titles = [r["source_title"] for r in records]
            half = 0 if i < 50 else 2
            for k in KS:
                found[k][half] += len(gold & set(titles[:k]))
                found[k][half + 1] += len(gold)
        print(
            dataset,
            name,
            " ".join(f"@{k}: {f[0] / f[1]:.3f}/{f[2] / f[3]:.3f}" for k, f in found.items()),
            flush=True,
        )


main(sys.argv[1])
