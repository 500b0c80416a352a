"""Offline: session 23's learned per-question choice among hybrid, propagate and mog (each + the
late rerank as shipped; ../../2026-11-27/document-choice/doc_select.py, whose features, reranking
and scoring this reuses), fitted on all 823 QASPER train papers (two folders) instead of 250,
with a gradient-boosted classifier beside ridge and logistic; scored on bench/longdoc pools.

usage: python doc_select_823.py TRAIN_FOLDER TRAIN_POOLS [TRAIN_FOLDER TRAIN_POOLS ...]
       --check CHECK_FOLDER CHECK_POOLS [TUNING_IDS]
(pools from `kgp lab rerank collect --strategy hybrid,propagate,mog --head 30`; TUNING_IDS: the
check questions propagate's weights were fitted on, reported apart)
"""

import importlib.util
import sys
from pathlib import Path

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.preprocessing import StandardScaler

_SPEC = importlib.util.spec_from_file_location(
    "doc_select", Path(__file__).resolve().parents[2] / "2026-11-27/document-choice/doc_select.py"
)
assert _SPEC and _SPEC.loader
doc_select = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(doc_select)
STRATEGIES, table = doc_select.STRATEGIES, doc_select.table


def picks_for(train, check):
    """Each model's choice per check question, fitted on ``train``."""
    X = np.stack([row[2] for row in train])
    Y = np.stack([row[1].mean(axis=1) for row in train])  # (q, strategies) mean over budgets
    Xc = np.stack([row[2] for row in check])
    sc = StandardScaler().fit(X)
    picks = {}
    for alpha in (1.0, 10.0, 100.0, 1000.0):
        pred = np.stack(
            [
                Ridge(alpha=alpha).fit(sc.transform(X), Y[:, j]).predict(sc.transform(Xc))
                for j in range(len(STRATEGIES))
            ],
            axis=1,
        )
        picks[f"ridge a={alpha:g}"] = pred.argmax(axis=1)
    label = Y.argmax(axis=1)
    distinct = Y.max(axis=1) > Y.min(axis=1) + 1e-9
    for C in (0.01, 0.1, 1.0):
        m = LogisticRegression(C=C, max_iter=2000).fit(sc.transform(X)[distinct], label[distinct])
        picks[f"logistic C={C:g}"] = m.predict(sc.transform(Xc))
    for depth in (2, 3):
        m = HistGradientBoostingClassifier(
            max_depth=depth, max_iter=200, learning_rate=0.05, random_state=0
        )
        picks[f"boosted depth={depth}"] = m.fit(X[distinct], label[distinct]).predict(Xc)
    return picks


def main():
    args = sys.argv[1:]
    at = args.index("--check")
    pairs, rest = args[:at], args[at + 1 :]
    train = [row for i in range(0, len(pairs), 2) for row in table(pairs[i], pairs[i + 1])]
    check = table(rest[0], rest[1])
    tuning = set(Path(rest[2]).read_text().split()) if len(rest) > 2 else set()
    picks = picks_for(train, check)
    doc_select.print_results(train, check, picks, tuning)


if __name__ == "__main__":
    main()
