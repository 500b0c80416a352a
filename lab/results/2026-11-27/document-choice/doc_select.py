"""Offline: a learned per-question choice among hybrid, propagate and mog (each + the late
rerank as shipped) on long documents, fitted on QASPER train pools, scored on bench/longdoc pools.

usage: python doc_select.py TRAIN_FOLDER TRAIN_POOLS CHECK_FOLDER CHECK_POOLS [TUNING_IDS]
(pools from `kgp lab rerank collect --strategy hybrid,propagate,mog --head 30`; TUNING_IDS: the
check questions propagate's weights were fitted on, reported apart)
"""

import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.preprocessing import StandardScaler

from kg_platform.config import get_settings
from kg_platform.retrieval.base import RetrievedItem
from kg_platform.retrieval.late_interaction import combine
from kg_platform.retrieval.rerank_weights import weights_for
from kg_platform_lab.evaluation.harness import cut_at, load_examples, score_example, to_ranking
from kg_platform_lab.rerank.pools import read_pools

STRATEGIES = ("hybrid", "propagate", "mog")
BUDGETS = (512, 1024)
N = 30
SETTINGS = get_settings()


def rerank(pool):
    m = min(N, len(pool.cosine))
    w = weights_for(pool.strategy, SETTINGS)
    s = combine(
        w, np.asarray(pool.cosine[:m]), np.asarray(pool.maxsim[:m]), np.asarray(pool.scores[:m])
    )
    head = sorted(range(m), key=lambda i: (-round(float(s[i]), 9), i))
    return head + list(range(m, len(pool.ids))), s


def recall(ex, pool, order):
    items = [RetrievedItem(id=pool.ids[i], text=pool.texts[i], score=0.0) for i in order]
    ranking = to_ranking(items)
    out = []
    for b in BUDGETS:
        sc = score_example(ex, cut_at(ranking, 5, b))
        out.append(sc.evidence_recall if sc.evidence_recall is not None else sc.paragraph_recall)
    return out


def features(question, by_strategy, orders):
    f = [len(question.split())]
    tops = {}
    for s in STRATEGIES:
        p, (order, _score) = by_strategy[s], orders[s]
        cos = np.asarray(p.cosine[:N]) if p.cosine else np.zeros(1)
        sim = np.asarray(p.maxsim[:N]) if p.maxsim else np.zeros(1)
        own = np.asarray(p.scores[:N]) if p.scores else np.zeros(1)
        spread = (own[0] - own[min(4, len(own) - 1)]) / (abs(own[0]) + 1e-9)
        f += [cos.max(), np.sort(cos)[-3:].mean(), sim.max(), np.sort(sim)[-3:].mean(), spread]
        tops[s] = {p.ids[i] for i in order[:5]}
    for a, b in (("hybrid", "propagate"), ("hybrid", "mog"), ("propagate", "mog")):
        f.append(len(tops[a] & tops[b]) / 5)
    return np.asarray(f, float)


def table(folder, pools_file):
    _, exs = load_examples(Path(folder), document_qa=True, limit=None)
    by_id = {ex.id: ex for ex in exs}
    grouped = defaultdict(dict)
    for p in read_pools(Path(pools_file)):
        grouped[p.question_id][p.strategy] = p
    rows = []
    for qid, by in grouped.items():
        if set(by) != set(STRATEGIES) or qid not in by_id:
            continue
        ex = by_id[qid]
        orders = {s: rerank(by[s]) for s in STRATEGIES}
        r = np.asarray([recall(ex, by[s], orders[s][0]) for s in STRATEGIES])  # (3, budgets)
        rows.append((qid, r, features(ex.question, by, orders)))
    return rows


def report(name, rows, pick):
    r = np.stack([row[1][pick[i]] for i, row in enumerate(rows)])
    return f"{name}: " + " / ".join(f"{v:.3f}" for v in r.mean(axis=0))


def main():
    train = table(sys.argv[1], sys.argv[2])
    check = table(sys.argv[3], sys.argv[4])
    tuning = set(Path(sys.argv[5]).read_text().split()) if len(sys.argv) > 5 else set()
    X = np.stack([row[2] for row in train])
    Y = np.stack([row[1].mean(axis=1) for row in train])  # (q, 3) mean over budgets
    sc = StandardScaler().fit(X)
    Xc = sc.transform(np.stack([row[2] for row in check]))
    picks = {}
    for alpha in (1.0, 10.0, 100.0, 1000.0):
        pred = np.stack(
            [Ridge(alpha=alpha).fit(sc.transform(X), Y[:, j]).predict(Xc) for j in range(3)], axis=1
        )
        picks[f"ridge a={alpha:g}"] = pred.argmax(axis=1)
    label = Y.argmax(axis=1)
    distinct = Y.max(axis=1) > Y.min(axis=1) + 1e-9
    for C in (0.01, 0.1, 1.0):
        m = LogisticRegression(C=C, max_iter=2000).fit(sc.transform(X)[distinct], label[distinct])
        picks[f"logistic C={C:g}"] = m.predict(Xc)
    print_results(train, check, picks, tuning)


def print_results(train, check, picks, tuning):
    """The check set's recall per choice (all questions, and those outside ``tuning``), then the
    train set's oracle and single strategies."""
    for subset, keep in (("all", lambda q: True), ("held (not tuning)", lambda q: q not in tuning)):
        idx = [i for i, row in enumerate(check) if keep(row[0])]
        rows = [check[i] for i in idx]
        print(f"== bench/longdoc {subset}: {len(rows)} questions (recall @512 / @1024)")
        for j, s in enumerate(STRATEGIES):
            print("  " + report(f"always {s}", rows, [j] * len(rows)))
        oracle = [int(np.argmax(row[1].mean(axis=1))) for row in rows]
        print("  " + report("oracle (per question)", rows, oracle))
        for name, p in picks.items():
            chosen = [int(p[i]) for i in idx]
            share = " ".join(f"{s}={chosen.count(j)}" for j, s in enumerate(STRATEGIES))
            print("  " + report(name, rows, chosen) + f"  [{share}]")
    ytr = [int(np.argmax(row[1].mean(axis=1))) for row in train]
    print(
        "== train:",
        len(train),
        "questions;",
        report("oracle", train, ytr),
        ";",
        " ".join(report(f"always {s}", train, [j] * len(train)) for j, s in enumerate(STRATEGIES)),
    )


if __name__ == "__main__":  # session 29's doc_select_823.py imports the functions
    main()
