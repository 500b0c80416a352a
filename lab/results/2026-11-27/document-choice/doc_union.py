"""Offline: one late rerank over the union of several strategies' candidates (no fitted
parameter) on long documents. usage: python doc_union.py FOLDER POOLS [TUNING_IDS]"""

import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from kg_platform.retrieval.base import RetrievedItem
from kg_platform.retrieval.late_interaction import combine
from kg_platform.retrieval.rerank_weights import LateWeights
from kg_platform_lab.evaluation.harness import cut_at, load_examples, score_example, to_ranking
from kg_platform_lab.rerank.pools import read_pools

BUDGETS = (512, 1024)


def recall(ex, ranked):
    ranking = to_ranking([RetrievedItem(id=i, text=t, score=0.0) for i, t in ranked])
    return [score_example(ex, cut_at(ranking, 5, b)).evidence_recall for b in BUDGETS]


def union(pools, names, each, rank_weight):
    """Candidates of ``names`` (first ``each`` of each), deduplicated by id, in round-robin
    order, reranked by min-max cosine + min-max MaxSim (+ a rank prior on that order)."""
    seen, cands = set(), []
    lists = [pools[n] for n in names]
    for r in range(each):
        for p in lists:
            if r < len(p.cosine) and p.ids[r] not in seen:
                seen.add(p.ids[r])
                cands.append((p.ids[r], p.texts[r], p.cosine[r], p.maxsim[r]))
    s = combine(
        LateWeights(rank=rank_weight),
        np.asarray([c[2] for c in cands]),
        np.asarray([c[3] for c in cands]),
    )
    order = sorted(range(len(cands)), key=lambda i: (-round(float(s[i]), 9), i))
    return [(cands[i][0], cands[i][1]) for i in order], len(cands)


def main():
    _, exs = load_examples(Path(sys.argv[1]), document_qa=True, limit=None)
    by_id = {ex.id: ex for ex in exs}
    tuning = set(Path(sys.argv[3]).read_text().split()) if len(sys.argv) > 3 else set()
    grouped = defaultdict(dict)
    for p in read_pools(Path(sys.argv[2])):
        grouped[p.question_id][p.strategy] = p
    variants = {
        "hybrid 30": (("hybrid",), 30, 0.0),
        "hybrid+mog 15 each": (("hybrid", "mog"), 15, 0.0),
        "hybrid+mog 30 each": (("hybrid", "mog"), 30, 0.0),
        "hybrid+propagate 15 each": (("hybrid", "propagate"), 15, 0.0),
        "hybrid+propagate 30 each": (("hybrid", "propagate"), 30, 0.0),
        "all three 10 each": (("hybrid", "propagate", "mog"), 10, 0.0),
        "all three 20 each": (("hybrid", "propagate", "mog"), 20, 0.0),
        "all three 30 each": (("hybrid", "propagate", "mog"), 30, 0.0),
        "all three 20 each, rank 0.5": (("hybrid", "propagate", "mog"), 20, 0.5),
    }
    res = {v: {"all": [], "held": []} for v in variants}
    sizes = defaultdict(list)
    for qid, pools in grouped.items():
        ex = by_id.get(qid)
        if ex is None or len(pools) < 3:
            continue
        for name, (names, each, rw) in variants.items():
            ranked, n = union(pools, names, each, rw)
            sizes[name].append(n)
            r = recall(ex, ranked)
            res[name]["all"].append(r)
            if qid not in tuning:
                res[name]["held"].append(r)
    for name, r in res.items():
        a, h = np.mean(r["all"], axis=0), np.mean(r["held"], axis=0)
        print(
            f"{name:30s} all {a[0]:.3f} / {a[1]:.3f}   held ({len(r['held'])}) {h[0]:.3f} / {h[1]:.3f}"
            f"   candidates {np.mean(sizes[name]):.1f}"
        )


main()
