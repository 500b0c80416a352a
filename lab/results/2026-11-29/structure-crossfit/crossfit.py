"""Out-of-fold MaxSim for the train pools: two query heads, each trained on one half of the
train papers, each pool's MaxSim read through the other half's head. Writes pools files with the
cosine and MaxSim replaced, for `kgp lab rerank fit-structure`."""

import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

from kg_platform.config import get_settings
from kg_platform.sdk.platform import KnowledgePlatform
from kg_platform_lab.cli.commands_rerank import _examples
from kg_platform_lab.rerank import query_head as qh
from kg_platform_lab.rerank.pools import read_pools

C = Path("/work/data/s29/choice")
SETS = [
    (C / "train250.jsonl", Path("/work/data/s26/ldtrain250"), "doc-ldtrain250"),
    (C / "train-rest.jsonl", Path("/work/data/s29/ldtrain-rest"), "doc-ldtrain-rest"),
]
OUT = Path(sys.argv[1])
OUT.mkdir(parents=True, exist_ok=True)


def log(m):
    print(m, file=sys.stderr, flush=True)


examples = _examples([d for _, d, _ in SETS])
rows, all_pools = [], []
t0 = time.perf_counter()
with KnowledgePlatform(get_settings()) as kp:
    for pools_file, _dataset, corpus in SETS:
        chosen = [p for p in read_pools(pools_file) if p.strategy == "hybrid"]
        all_pools += chosen
        name = chosen[0].dataset
        rows += qh.collect_states(
            chosen,
            {qid: ex.question for (d, qid), ex in examples.items() if d == name},
            kp.corpus_name(corpus),
            kp,
            strategies=["hybrid"],
            candidates=30,
            log=log,
        )
log(f"states of {len(rows)} in {time.perf_counter() - t0:.0f} s")
index = qh.pool_index(all_pools)
half = [qh.half_of(examples[(r.dataset, r.question_id)].doc_id) for r in rows]
heads = {}
for h in (0, 1):
    part = [r for r, x in zip(rows, half) if x == h]
    heads[h] = qh.train_head(part, index, examples, log=log, threads=2)
    log(f"head of half {h}: {len(part)} rows")
out_pools = {}
check = {0: [], 1: []}
with torch.no_grad():
    for r, h in zip(rows, half):
        t = qh._tensors(r)
        cos, ms = heads[1 - h].parts(t)
        p = index[r.key]
        n = len(r.c_tok)
        diff = float(np.max(np.abs(np.asarray(p.cosine[:n]) - cos.double().numpy()))) if n else 0.0
        check[h].append(diff)
        q = dataclasses.replace(p, cosine=[float(x) for x in cos], maxsim=[float(x) for x in ms])
        out_pools.setdefault(p.dataset, []).append(q)
log(f"max |pool cosine - recomputed| per half: {max(check[0]):.4f} {max(check[1]):.4f}")
for ds, ps in out_pools.items():
    with (OUT / f"{ds}.jsonl").open("w", encoding="utf-8") as fh:
        for p in ps:
            fh.write(p.to_json() + "\n")
    log(f"wrote {len(ps)} pools of {ds}")
print(json.dumps({"rows": len(rows), "seconds": round(time.perf_counter() - t0, 1)}))
