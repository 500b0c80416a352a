"""Offline: per-question choice between entity+late and mogg(no router)+late on the multi-hop
dev sets, leave one set out. usage: python sel_eval.py [FOLDER with pools-*.jsonl and sel-*.jsonl]"""

import json
import sys
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from kg_platform.config import get_settings
from kg_platform.retrieval.late_interaction import combine
from kg_platform.retrieval.rerank_weights import weights_for
from kg_platform_lab.evaluation.harness import cut_at, load_examples, score_example
from kg_platform_lab.evaluation.metrics import Ranked, dedupe

SETS = ["hotpotqa", "2wikimultihopqa", "musique"]
N = 30
S = get_settings()
WE, WM = weights_for("entity", S), weights_for("mogg", S)
D = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(".")


def rerank(cands, w):
    head = cands[:N]
    s = combine(
        w,
        np.array([c[2] for c in head]),
        np.array([c[3] for c in head]),
        np.array([c[4] for c in head]),
    )
    order = sorted(range(len(head)), key=lambda i: (-round(float(s[i]), 9), i))
    return [head[i] for i in order], s[order]


def recall(ex, ranked):
    return score_example(
        ex, cut_at(dedupe([Ranked(c[0], c[1]) for c in ranked]), 5, 512)
    ).paragraph_recall


def toks(t):
    return set(w for w in t.lower().split() if len(w) > 3)


rows = []
for d in SETS:
    _, exs = load_examples(
        Path(__file__).resolve().parents[4].parent / "shared" / "bench" / "dev" / f"{d}.jsonl",
        document_qa=False,
        limit=None,
    )
    by = {e.id: e for e in exs}
    pe = {json.loads(line)["qid"]: json.loads(line) for line in open(D / f"pools-{d}.jsonl")}
    for line in open(D / f"sel-{d}.jsonl"):
        s = json.loads(line)
        ex = by[s["qid"]]
        if not ex.gold:
            continue
        p = pe[s["qid"]]
        ch = p["chunks"]
        E = [(cid, ch[cid][0], ch[cid][1], ch[cid][2], sc) for cid, sc in p["entity"]]
        M = [(gid, text, a, b, sc) for (gid, sc, text), (a, b) in zip(s["mogg"], s["mogg_late"])]
        Er, Es = rerank(E, WE)
        Mr, Ms = rerank(M, WM)
        rE, rM = recall(ex, Er), recall(ex, Mr)
        e_top = set().union(*[toks(c[1]) for c in Er[:3]]) if Er else set()
        m_top = set().union(*[toks(c[1]) for c in Mr[:3]]) if Mr else set()
        q = toks(ex.question)
        f = [
            len(s["mentions"]),
            len(s["seeds"]),
            max([c[2] for c in E[:N]] or [0])
            - max([c[2] for c in M[:N]] or [0]),  # best cosine E - M
            max([c[3] for c in E[:N]] or [0])
            - max([c[3] for c in M[:N]] or [0]),  # best maxsim E - M
            np.mean([c[2] for c in Er[:3]] or [0]) - np.mean([c[2] for c in Mr[:3]] or [0]),
            len(e_top & m_top) / max(1, len(e_top | m_top)),
            len(q & e_top) / max(1, len(q)) - len(q & m_top) / max(1, len(q)),
            len(ex.question.split()),
        ]
        rows.append((d, s["qid"], rE, rM, np.array(f, float)))

print("set           E      M     oracle   n  Mwins Ewins")
for d in SETS:
    r = [x for x in rows if x[0] == d]
    print(
        f"{d:14s}{np.mean([x[2] for x in r]):.3f}  {np.mean([x[3] for x in r]):.3f}  {np.mean([max(x[2], x[3]) for x in r]):.3f}  {len(r)}  {sum(x[3] > x[2] for x in r)}  {sum(x[2] > x[3] for x in r)}"
    )

for C in (0.01, 0.1, 1.0):
    out = []
    for held in SETS:
        tr = [x for x in rows if x[0] != held and x[2] != x[3]]
        X = np.stack([x[4] for x in tr])
        y = np.array([x[3] > x[2] for x in tr])
        sc = StandardScaler().fit(X)
        m = LogisticRegression(C=C, class_weight="balanced").fit(sc.transform(X), y)
        te = [x for x in rows if x[0] == held]
        pm = m.predict_proba(sc.transform(np.stack([x[4] for x in te])))[:, 1]
        got = np.mean([x[3] if pr > 0.5 else x[2] for x, pr in zip(te, pm)])
        out.append(f"{held} {got:.3f} (M chosen {int((pm > 0.5).sum())})")
    print("C", C, " | ".join(out))
