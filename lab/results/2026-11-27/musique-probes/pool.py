"""Gold-paragraph coverage of a strategy's rerank pool vs of its selection at 512 tokens."""

import json
import sys
from kg_platform.sdk import KnowledgePlatform
from kg_platform.retrieval.pipeline import retrieve
from kg_platform.retrieval.base import get_strategy

ds, corpus, strat = sys.argv[1], sys.argv[2], sys.argv[3]
out = open(sys.argv[4], "w")
qs = [json.loads(line) for line in open(f"../shared/bench/dev/{ds}.jsonl")]
kp = KnowledgePlatform.from_env()
ctx = kp.retrieval_context(corpus)
runner = get_strategy(strat, ctx)


def titles(ids):
    rec = kp.graph.driver.execute_query(
        "UNWIND $ids AS id MATCH (c:Chunk {id: id}) OPTIONAL MATCH (s:Source {id: c.source_id}) RETURN c.id AS id, s.title AS t",
        ids=ids,
    ).records
    m = {r["id"]: r["t"] for r in rec}
    return [m.get(i) for i in ids]


tp = ts = tg = 0
for q in qs:
    gold = sorted({sf[0] for sf in q["supporting_facts"]})
    res = retrieve(
        ctx, q["question"], strategy=runner, k=10, select="late", max_tokens=512, enrich=False
    )
    pool = titles([it.id for it in res.ranked])
    sel = titles([it.id for it in res.items])
    inpool = [g for g in gold if g in pool]
    insel = [g for g in gold if g in sel]
    tp += len(inpool)
    ts += len(insel)
    tg += len(gold)
    out.write(
        json.dumps(
            {
                "q": q["question"],
                "gold": gold,
                "pool_rank": {g: (pool.index(g) if g in pool else None) for g in gold},
                "sel": insel,
                "n_pool": len(pool),
            }
        )
        + "\n"
    )
print(strat, ds, "pool", round(tp / tg, 3), "sel", round(ts / tg, 3))
