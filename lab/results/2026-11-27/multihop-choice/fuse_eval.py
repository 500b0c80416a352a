"""Offline fusion of entity and mogg candidates (collected by fuse_collect.py), scored as kgp lab
eval scores: dedupe, cut at 512 tokens, paragraph recall.

usage: python fuse_eval.py DATASET.jsonl POOLS.jsonl
"""

import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from kg_platform.config import get_settings
from kg_platform.retrieval.late_interaction import combine
from kg_platform.retrieval.rerank_weights import LateWeights, weights_for
from kg_platform_lab.evaluation.harness import cut_at, load_examples, score_example
from kg_platform_lab.evaluation.metrics import Ranked, dedupe

N = 30
settings = get_settings()
W_ENTITY = weights_for("entity", settings)
W_PLAIN = weights_for("mogg", settings)


def rerank(cands, w):
    """cands: list of (id, text, cos, sim, retrieval score) in the fused order."""
    head = cands[:N]
    if not head:
        return []
    s = combine(
        w,
        np.array([c[2] for c in head]),
        np.array([c[3] for c in head]),
        np.array([c[4] for c in head]),
    )
    order = sorted(range(len(head)), key=lambda i: (-round(float(s[i]), 9), i))
    return [head[i] for i in order] + cands[N:]


def entity_list(p):
    ch = p["chunks"]
    return [(cid, ch[cid][0], ch[cid][1], ch[cid][2], sc) for cid, sc in p["entity"]]


def mogg_groups(p):
    return [(gid, text, a, b, sc) for (gid, sc, text, _), (a, b) in zip(p["mogg"], p["mogg_late"])]


def mogg_chunks(p):
    ch, seen, out = p["chunks"], set(), []
    for _gid, sc, _text, chunks in p["mogg"]:
        for c in chunks:
            if c and c not in seen:
                seen.add(c)
                out.append((c, ch[c][0], ch[c][1], ch[c][2], sc))
    return out


def rrf(lists, k=60, weights=None):
    score, first = defaultdict(float), {}
    weights = weights or [1.0] * len(lists)
    for w, lst in zip(weights, lists):
        for r, c in enumerate(lst):
            score[c[0]] += w / (k + r + 1)
            first.setdefault(c[0], c)
    return [first[i][:4] + (score[i],) for i in sorted(score, key=lambda i: -score[i])]


def interleave(a, b):
    out, seen = [], set()
    for x, y in zip(a + [None] * len(b), b + [None] * len(a)):
        for c in (x, y):
            if c and c[0] not in seen:
                seen.add(c[0])
                out.append(c)
    return out


def variants(p):
    E, MG, MC = entity_list(p), mogg_groups(p), mogg_chunks(p)
    v = {
        "entity+late": rerank(E, W_ENTITY),
        "mogg+late": rerank(MG, W_PLAIN),
        "moggchunks+late": rerank(MC, W_PLAIN),
    }
    for r in (0.0, 1.0, 2.0):
        w = LateWeights(rank=r)
        v[f"rrf(E,MC) rank{r:g}"] = rerank(rrf([E[:N], MC[:N]]), w)
        v[f"rrf(E,MG) rank{r:g}"] = rerank(rrf([E[:N], MG[:N]]), w)
        v[f"inter(E,MC) rank{r:g}"] = rerank(interleave(E[:N], MC[:N]), w)
        v[f"E15+MC15 rank{r:g}"] = rerank(interleave(E[:15], MC[:15]), w)
        v[f"E20+MC10 rank{r:g}"] = rerank(interleave(E[:20], MC[:10]), w)
    return v


def main():
    _, examples = load_examples(Path(sys.argv[1]), document_qa=False, limit=None)
    by_id = {ex.id: ex for ex in examples}
    pools = [json.loads(line) for line in open(sys.argv[2])]
    sums, n = defaultdict(float), 0
    per = defaultdict(dict)
    for p in pools:
        ex = by_id[p["qid"]]
        if not ex.gold:
            continue
        n += 1
        for name, ranked in variants(p).items():
            ranking = dedupe([Ranked(c[0], c[1]) for c in ranked])
            s = score_example(ex, cut_at(ranking, 5, 512)).paragraph_recall
            sums[name] += s
            per[name][p["qid"]] = s
    for name in sums:
        print(f"{name:28s} {sums[name] / n:.3f}")
    e, m = per["entity+late"], per["mogg+late"]
    print("oracle(E,M)", round(sum(max(e[q], m[q]) for q in e) / n, 3), "n", n)


main()
