"""Offline: a second rerank pass conditioned on the first pick (pseudo-relevance feedback) over
entity's reranked candidates. usage: python prf_eval.py DATASET.jsonl POOLS.jsonl"""

import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from kg_platform.config import get_settings
from kg_platform.retrieval.base import RetrievalContext
from kg_platform.retrieval.late_interaction import combine, late_scores, min_max
from kg_platform.retrieval.rerank_weights import weights_for
from kg_platform.sdk.platform import KnowledgePlatform
from kg_platform_lab.evaluation.harness import cut_at, load_examples, score_example
from kg_platform_lab.evaluation.metrics import Ranked, dedupe

N = 30
ds, poolf = Path(sys.argv[1]), sys.argv[2]
corpus = "qa-" + ds.stem
_, examples = load_examples(ds, document_qa=False, limit=None)
by_id = {ex.id: ex for ex in examples}
pools = [json.loads(line) for line in open(poolf)]
sums, n = defaultdict(float), 0
with KnowledgePlatform(get_settings()) as kp:
    ctx = RetrievalContext(
        graph=kp.graph, embedder=kp.embedder, settings=kp.settings, corpus=corpus
    )
    W = weights_for("entity", kp.settings)
    for p in pools:
        ex = by_id[p["qid"]]
        if not ex.gold:
            continue
        n += 1
        ch = p["chunks"]
        E = [(cid, ch[cid][0], ch[cid][1], ch[cid][2]) for cid, _ in p["entity"]][:N]
        s1 = combine(W, np.array([c[2] for c in E]), np.array([c[3] for c in E]))
        order = sorted(range(len(E)), key=lambda i: (-round(float(s1[i]), 9), i))
        variants = {"shipped": order}
        if len(E) > 2:
            top = order[0]
            ids = [c[0] for c in E]
            texts = [c[1] for c in E]
            for qname, q2 in (("top1", E[top][1]), ("q+top1", ex.question + " " + E[top][1])):
                _, c2, m2 = late_scores(q2, texts, ctx, ids=ids)
                mask = np.ones(len(E), bool)
                mask[top] = False
                s2 = np.zeros(len(E))
                s2[mask] = min_max(c2[mask]) + min_max(m2[mask])
                for beta in (0.25, 0.5, 1.0, 2.0):
                    s = s1 + beta * s2
                    rest = sorted(
                        (i for i in range(len(E)) if i != top),
                        key=lambda i: (-round(float(s[i]), 9), i),
                    )
                    variants[f"{qname} b{beta}"] = [top] + rest
        for name, o in variants.items():
            ranking = dedupe([Ranked(E[i][0], E[i][1]) for i in o])
            sums[name] += score_example(ex, cut_at(ranking, 5, 512)).paragraph_recall
for name in sums:
    print(f"{name:16s} {sums[name] / n:.3f}")
