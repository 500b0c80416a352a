"""Fit the late rerank's weights on one half of the train sample's papers (by sha256 of the paper
id) and score them on the other half, both ways: does a fit transfer inside the train split?

Run from the repository with the pools of `kgp lab rerank collect` (see README.md here):
    python lab/results/2026-11-27/rerank-fit/train_halves.py hybrid
"""

import hashlib
import sys
from pathlib import Path

from kg_platform_lab.evaluation.docqa import load_docqa
from kg_platform_lab.rerank.fit import FIXED, Scorer, fit_strategy
from kg_platform_lab.rerank.pools import Pool, read_pools

SAMPLE = Path("/work/data/ldtrain250")
POOLS = Path("/work/data/pools/train.jsonl")


def main(strategy: str) -> None:
    questions = {q.id: q for q in load_docqa(SAMPLE)}
    pools = [p for p in read_pools(POOLS) if p.strategy == strategy]
    scorer = Scorer({(SAMPLE.name, k): v for k, v in questions.items()}, [512, 1024])

    def half(p: Pool) -> int:
        doc = questions[p.question_id].doc_id
        return int(hashlib.sha256(doc.encode()).hexdigest(), 16) % 2

    for f in (0, 1):
        train = [p for p in pools if half(p) == f]
        test = [p for p in pools if half(p) != f]
        fit = fit_strategy(strategy, train, scorer, 30)
        print(
            strategy,
            "half",
            f,
            fit.best.to_dict(),
            "train",
            [round(x, 3) for x in fit.best_recall],
            "fixed",
            [round(x, 3) for x in fit.fixed_recall],
            "| other half: fitted",
            [round(x, 3) for x in scorer.mean(test, fit.best, 30)],
            "fixed",
            [round(x, 3) for x in scorer.mean(test, FIXED, 30)],
        )


if __name__ == "__main__":
    main(sys.argv[1])
