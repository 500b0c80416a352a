"""Does the paper's structure add to the late rerank inside one paper? An offline probe.

For `hybrid`'s pools (first 30 candidates with the rerank's cosine and MaxSim, collected in
session 29 by `kgp lab rerank collect --head 30`), each candidate gets the shipped rerank score
(min-max cosine + min-max MaxSim) and features read from the graph: the rerank scores of its
neighbours in document order and of its section, its position in the paper, its length. A
logistic regression fitted on the train split's pools (label: the candidate holds a gold evidence
sentence) reorders each list; evidence recall at 512 / 1024 tokens is compared with the shipped
order on the train split (fit half / held half, split by paper) and on bench/longdoc.

Run from the repo root with the local Neo4j up (the corpora doc-ldtrain250, doc-ldtrain-rest,
doc-longdoc): python lab/results/2026-11-29/structure-probe/probe.py

The features are the product's own (``kg_platform.retrieval.structure_rerank.features`` over the
rows of ``places``), which this probe's first version computed itself before the document rerank
shipped (git history of this file has that version, whose figures the README quotes; the shipped
function reads the same 13 features, with a section's chunks counted at the chunk's own level).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

from kg_platform.graph import GraphClient
from kg_platform.retrieval.structure_rerank import features as structure_features
from kg_platform.retrieval.structure_rerank import places
from kg_platform_lab.cli.commands_rerank import _examples
from kg_platform_lab.rerank.fit import Scorer, order_by_score
from kg_platform_lab.rerank.pools import read_pools
from kg_platform_lab.rerank.query_head import half_of, labels

POOLS = Path("/work/data/s29/choice")
SETS = [
    ("train250.jsonl", Path("/work/data/s26/ldtrain250"), "doc-ldtrain250"),
    ("train-rest.jsonl", Path("/work/data/s29/ldtrain-rest"), "doc-ldtrain-rest"),
    ("check.jsonl", Path("../shared/bench/longdoc"), "doc-longdoc"),
]
N = 30


def features(pool, info) -> tuple[np.ndarray, np.ndarray]:
    """The document rerank's features of a pool's first N candidates, and their late score."""
    m = min(N, len(pool.cosine))
    f = structure_features(pool.cosine[:m], pool.maxsim[:m], [info.get(i) for i in pool.ids[:m]])
    return f, f[:, 0]


def main() -> None:
    examples = _examples([d for _, d, _ in SETS])
    data = {}
    with GraphClient.from_settings() as g:
        for fname, _, _ in SETS:
            pools = [p for p in read_pools(POOLS / fname) if p.strategy == "hybrid"]
            ids = sorted({i for p in pools for i in p.ids[:N]})
            info = {}
            for a in range(0, len(ids), 2000):
                batch = ids[a : a + 2000]
                info.update(zip(batch, places(batch, g)))
            data[fname] = [(p, *features(p, info)) for p in pools]
            print(fname, len(pools), "pools", file=sys.stderr)
    scorer = Scorer(examples, (512, 1024))

    def xy(items):
        X, y = [], []
        for p, f, _ in items:
            ex = examples[(p.dataset, p.question_id)]
            lab = labels(p, ex, len(f))
            if any(lab) and not all(lab):
                X.append(f)
                y.extend(lab)
        return np.vstack(X), np.asarray(y)

    def recall(items, model):
        out = []
        for p, f, base in items:
            s = base if model is None else model.decision_function(f)
            out.append(scorer.recall(p, order_by_score(s, len(p.ids))))
        return np.mean(np.asarray(out), axis=0).round(3).tolist()

    train = data["train250.jsonl"] + data["train-rest.jsonl"]
    doc = lambda p: examples[(p.dataset, p.question_id)].doc_id  # noqa: E731
    fit_half = [t for t in train if half_of(doc(t[0])) == 0]
    held_half = [t for t in train if half_of(doc(t[0])) == 1]
    check = data["check.jsonl"]
    for name, cols in [
        ("late only (refit)", [0, 1, 2]),
        ("+ neighbours", [0, 1, 2, 3, 4]),
        ("+ section", [0, 1, 2, 5, 6, 7]),
        ("+ position", [0, 1, 2, 8, 9, 10]),
        ("all", list(range(13))),
    ]:
        sel = lambda items, cols=cols: [(p, f[:, cols], b) for p, f, b in items]  # noqa: E731
        X, y = xy(sel(fit_half))
        half = LogisticRegression(C=1.0, max_iter=2000).fit(X, y)
        X, y = xy(sel(train))
        full = LogisticRegression(C=1.0, max_iter=2000).fit(X, y)
        print(
            f"{name:20s} held half {recall(sel(held_half), half)} "
            f"(shipped {recall(held_half, None)}); "
            f"bench/longdoc {recall(sel(check), full)} (shipped {recall(check, None)})",
            "coef",
            full.coef_.round(2).tolist(),
        )


if __name__ == "__main__":
    main()
