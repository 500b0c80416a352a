"""Multi-hop rerank probe: can a logistic model over a union of entity's and mogg's candidates
(or over the default's own pool) beat the shipped default ordering?  Leave one set out."""

import os
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from kg_platform.retrieval.base import RetrievedItem
from kg_platform.retrieval.late_interaction import combine, min_max
from kg_platform.retrieval.rerank_weights import LateWeights
from kg_platform_lab.evaluation.harness import cut_at, load_examples, score_example, to_ranking
from kg_platform_lab.rerank.fit import order_by_score
from kg_platform_lab.rerank.pools import read_pools
from kg_platform_lab.rerank.structure_fit import fit_logistic

SETS = ["hotpotqa", "2wikimultihopqa", "musique"]
BUDGET = 512
N = 16
ONLY_ENTITY = bool(os.environ.get("ONLY_ENTITY"))
ENTITY_W = LateWeights(cosine=1.0, maxsim=1.0, retrieval=0.0, rank=2.0)
FIXED = LateWeights()

pools = defaultdict(dict)
examples = {}
for d in SETS:
    for p in read_pools(Path(os.environ.get("POOLS", "/work/data/s32/pools")) / f"{d}.jsonl"):
        pools[(d, p.question_id)][p.strategy] = p
    _, exs = load_examples(
        Path(os.environ.get("BENCH", "/work/shared/bench")) / "dev" / f"{d}.jsonl",
        document_qa=False,
    )
    for ex in exs:
        examples[(d, ex.id)] = ex


def recall(key, ids, texts):
    items = [RetrievedItem(id=i, text=t, score=0.0) for i, t in zip(ids, texts)]
    return score_example(examples[key], cut_at(to_ranking(items), 5, BUDGET)).paragraph_recall


gold_memo = {}


def is_gold(key, cid, text):
    k = (key, cid)
    if k not in gold_memo:
        gold_memo[k] = int(recall(key, [cid], [text]) > 0)
    return gold_memo[k]


def ordered(pool, scores):
    o = order_by_score(np.asarray(scores), len(pool.ids))
    return [pool.ids[i] for i in o], [pool.texts[i] for i in o]


def default_order(ps):
    a, e = ps["auto"], ps["entity"]
    chosen = "entity" if a.ids[:N] == e.ids[:N] else "mogg"
    p = ps[chosen]
    if chosen == "entity":
        m = min(16, len(p.cosine))
        s = combine(
            ENTITY_W, np.asarray(p.cosine[:m]), np.asarray(p.maxsim[:m]), np.asarray(p.scores[:m])
        )
    else:
        m = min(30, len(p.cosine))
        s = combine(
            FIXED, np.asarray(p.cosine[:m]), np.asarray(p.maxsim[:m]), np.asarray(p.scores[:m])
        )
    return chosen, ordered(p, s)


def union(ps, n_each=16):
    """Candidates of entity's and mogg's first n_each, with features."""
    e, g = ps["entity"], ps["mogg"]
    cand = {}
    for src, p in (("e", e), ("g", g)):
        m = min(n_each, len(p.cosine))
        for r in range(m):
            cid = p.ids[r]
            if ONLY_ENTITY and src == "g" and cid not in cand:
                continue
            c = cand.setdefault(
                cid,
                {
                    "text": p.texts[r],
                    "cos": p.cosine[r],
                    "sim": p.maxsim[r],
                    "re": None,
                    "rg": None,
                },
            )
            c["r" + src] = r
    ids = list(cand)
    cos = min_max(np.asarray([cand[i]["cos"] for i in ids]))
    sim = min_max(np.asarray([cand[i]["sim"] for i in ids]))
    rows = []
    for k, i in enumerate(ids):
        c = cand[i]
        re_ = 1 - c["re"] / (n_each - 1) if c["re"] is not None else 0.0
        rg = 1 - c["rg"] / (n_each - 1) if c["rg"] is not None else 0.0
        rows.append(
            [
                cos[k] + sim[k],
                cos[k],
                sim[k],
                re_,
                rg,
                float(c["re"] is not None),
                float(c["rg"] is not None),
                float(c["re"] is not None and c["rg"] is not None),
            ]
        )
    return ids, [cand[i]["text"] for i in ids], np.asarray(rows)


def shipped_recall(key, p):
    """Recall of one strategy's pool reranked as the product does (entity: 16 candidates with
    its walk's rank; mogg: the fixed sum over 30)."""
    w = ENTITY_W if p.strategy == "entity" else FIXED
    m = min(16 if p.strategy == "entity" else 30, len(p.cosine))
    sc = combine(w, np.asarray(p.cosine[:m]), np.asarray(p.maxsim[:m]), np.asarray(p.scores[:m]))
    return recall(key, *ordered(p, sc))


def main():
    chose = defaultdict(lambda: defaultdict(int))
    base = defaultdict(list)
    data = defaultdict(list)  # set -> (key, ids, texts, X, y)
    for key, ps in pools.items():
        if key not in examples or not {"auto", "entity", "mogg"} <= set(ps):
            continue
        d = key[0]
        ch, (ids, texts) = default_order(ps)
        chose[d][ch] += 1
        base[d].append(recall(key, ids, texts))
        for s in ("entity", "mogg"):
            base[d + ":" + s].append(shipped_recall(key, ps[s]))
        uids, utexts, X = union(ps)
        y = np.asarray([is_gold(key, i, t) for i, t in zip(uids, utexts)])
        data[d].append((key, uids, utexts, X, y))
    for d in SETS:
        print(
            d,
            dict(chose[d]),
            "default %.3f" % np.mean(base[d]),
            "entity %.3f mogg %.3f" % (np.mean(base[d + ":entity"]), np.mean(base[d + ":mogg"])),
            "oracle %.3f" % np.mean(np.maximum(base[d + ":entity"], base[d + ":mogg"])),
        )
    feats = [int(f) for f in sys.argv[1].split(",")] if len(sys.argv) > 1 else list(range(8))
    for held in SETS + ["all"]:
        train = [r for d in SETS if d != held for r in data[d]]
        xs = np.vstack([r[3][:, feats] for r in train])
        ys = np.concatenate([r[4] for r in train])
        model = fit_logistic(xs, ys.astype(float), c=1.0)
        for d in [held] if held != "all" else SETS:
            recs, fixed = [], []
            for key, uids, utexts, X, _ in data[d]:
                s = model.scores(X[:, feats])
                o = sorted(range(len(uids)), key=lambda i: (-round(float(s[i]), 9), i))
                recs.append(recall(key, [uids[i] for i in o], [utexts[i] for i in o]))
                s2 = X[:, 0]
                o2 = sorted(range(len(uids)), key=lambda i: (-round(float(s2[i]), 9), i))
                fixed.append(recall(key, [uids[i] for i in o2], [utexts[i] for i in o2]))
            print(
                f"held={held:16s} {d:16s} union-learned {np.mean(recs):.3f} union-fixed {np.mean(fixed):.3f} default {np.mean(base[d]):.3f}  coef {np.round(model.coef, 2).tolist()}"
            )


def by_type():
    import collections

    for d in SETS:
        t = collections.defaultdict(lambda: [0, 0.0, 0.0, 0])
        for key, ps in pools.items():
            if key[0] != d or key not in examples:
                continue
            ex = examples[key]
            typ = ex.type
            r = {s: shipped_recall(key, ps[s]) for s in ("entity", "mogg")}
            a = t[typ]
            a[0] += 1
            a[1] += r["entity"]
            a[2] += r["mogg"]
            a[3] += r["entity"] < r["mogg"]
        for typ, a in t.items():
            print(
                d,
                typ,
                a[0],
                "entity %.3f mogg %.3f mogg-better %d" % (a[1] / a[0], a[2] / a[0], a[3]),
            )


main() if not os.environ.get("BYTYPE") else by_type()
