"""The chain-pair study (lab/results/2026-12-03/chain-pair): a *selective* pair score for the
final ranking, trained to tell a linked gold second hop from a linked distractor.

Over the pools ``chain_study collect`` wrote, every candidate the shipped late rerank reorders
gets a feature row (:func:`features`): its late score and rank, and for each of the shipped
rerank's first two candidates (the anchors, the likely first hops) whether it is that anchor,
its title / entity / references link to it, its MDR hop score (the question read together with
the anchor's text), plus whether the question names its title and the question's shape. A
logistic regression (fixed a priori, nothing tuned: the README's rule) learns which candidates
cover a gold paragraph; the ranking sorts the candidates by its probability. The features and
the scoring are the product's (:mod:`kg_platform.retrieval.rerank.chain_pair`), so what is
fitted here is what runs.

    python -m kg_platform_lab.rerank.chain_pair rotations pools/hotpotqa.jsonl \
        pools/2wikimultihopqa.jsonl pools/musique.jsonl --out rotations.json \
        --model kg_platform/models/rerank/chain-pair.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from kg_platform.retrieval.rerank.chain_pair import (
    ANCHORS,
    FIRST_SHAPE,
    ChainShape,
    chain_features,
    feature_names,
    logits,
)

__all__ = ["ANCHORS", "ChainShape", "feature_names", "fit", "chain_features", "logits", "rotations"]


# ----------------------------------------------------------------------------------- offline
def _record_rows(
    rec: dict[str, Any], settings: Any, shape: ChainShape = FIRST_SHAPE
) -> tuple[np.ndarray, list[int], np.ndarray]:
    """(feature rows, shipped order, late scores) of a pool record's first ``n`` candidates."""
    from kg_platform.retrieval.rerank.late_interaction import combine, min_max
    from kg_platform.retrieval.rerank.weights import weights_for

    n = rec["n"]
    anchors_n = shape.anchors
    head = rec["items"][:n]
    late = combine(
        weights_for(rec["chosen"], settings),
        np.asarray([it["cos"] for it in head]),
        np.asarray([it["sim"] for it in head]),
        np.asarray([it["score"] for it in head]),
    )
    order = sorted(range(len(head)), key=lambda j: (-round(float(late[j]), 9), j))
    anchors = order[:anchors_n]
    hop = None
    if shape.hop and rec.get("hop_cos") and list(rec["anchors"][:anchors_n]) == anchors:
        hop = np.stack(
            [
                min_max(np.asarray(rec["hop_cos"][r][:n]))
                + min_max(np.asarray(rec["hop_sim"][r][:n]))
                for r in range(min(anchors_n, len(rec["hop_cos"])))
            ]
        )
    return chain_features(rec["question"], head, late, hop, anchors, shape), order, late


def _labels(rec: dict[str, Any], gold: Any) -> np.ndarray:
    from kg_platform_lab.evaluation.metrics import normalise

    return np.asarray(
        [
            1.0 if any(f.covered_by(normalise(it["text"])) for f in gold) else 0.0
            for it in rec["items"][: rec["n"]]
        ]
    )


def fit(x: np.ndarray, y: np.ndarray, shape: ChainShape = FIRST_SHAPE) -> dict[str, Any]:
    """The rule's model: standardised features, L2 logistic regression, C = 1."""
    from sklearn.linear_model import LogisticRegression

    mean = x.mean(axis=0)
    std = x.std(axis=0)
    std[std == 0] = 1.0
    model = LogisticRegression(C=1.0, max_iter=2000)
    model.fit((x - mean) / std, y)
    return {
        "shape": shape.as_dict(),
        "features": feature_names(shape),
        "mean": mean.tolist(),
        "scale": std.tolist(),
        "coef": model.coef_[0].tolist(),
        "intercept": float(model.intercept_[0]),
    }


def rotations(
    files: list[Path],
    out: Path | None,
    model_out: Path | None = None,
    shape: ChainShape = FIRST_SHAPE,
    entity_candidates: int | None = None,
) -> None:
    from kg_platform.config import get_settings
    from kg_platform_lab.rerank import chain_study

    settings = get_settings()
    chain_study._SETTINGS = settings
    data: dict[str, Any] = {}
    for f in files:
        recs = [json.loads(line) for line in f.open(encoding="utf-8")]
        if entity_candidates:  # the pool holds more than the 16 the rerank reads for `entity`
            for rec in recs:
                if rec["chosen"] == "entity":
                    rec["n"] = min(entity_candidates, len(rec["items"]))
        gold = chain_study._gold(f.stem)
        rows = [(_record_rows(r, settings, shape), _labels(r, gold[r["id"]])) for r in recs]
        data[f.stem] = (recs, gold, rows)

    def score(name: str, model: dict[str, Any] | None) -> tuple[float, float]:
        recs, gold, rows = data[name]
        pr = al = 0.0
        for rec, ((x, order, _late), _y) in zip(recs, rows, strict=True):
            head = rec["items"][: rec["n"]]
            tail = rec["items"][rec["n"] :] + rec["tail"]
            if model is None:
                idx = order
            else:
                p = logits(model, x)
                pos = {j: k for k, j in enumerate(order)}
                idx = sorted(range(len(head)), key=lambda j: (-round(float(p[j]), 9), pos[j]))
            p_, a_ = chain_study._score([head[j] for j in idx] + tail, gold[rec["id"]])
            pr += p_ / len(recs)
            al += a_ / len(recs)
        return round(pr, 4), round(al, 4)

    report: dict[str, Any] = {
        "shape": shape.as_dict(),
        "entity_candidates": entity_candidates,
        "shipped": {name: score(name, None) for name in data},
    }
    print("shipped", json.dumps(report["shipped"]), flush=True)
    names_ = list(data)
    report["rotations"] = []
    for check in names_:
        fit_on = [n for n in names_ if n != check]
        x = np.concatenate([r[0][0] for n in fit_on for r in data[n][2]])
        y = np.concatenate([r[1] for n in fit_on for r in data[n][2]])
        model = fit(x, y, shape)
        row = {
            "check": check,
            "fit_on": fit_on,
            "check_model": score(check, model),
            "check_shipped": report["shipped"][check],
            "fit_model": {n: score(n, model) for n in fit_on},
            "coef": dict(zip(model["features"], [round(c, 3) for c in model["coef"]], strict=True)),
        }
        sm, ss = row["check_model"], row["check_shipped"]
        row["wins"] = bool(sm[0] > ss[0] and sm[1] >= ss[1])
        report["rotations"].append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "coef"}), flush=True)
    x = np.concatenate([r[0][0] for n in names_ for r in data[n][2]])
    y = np.concatenate([r[1] for n in names_ for r in data[n][2]])
    pooled = fit(x, y, shape)
    report["pooled"] = {"in_sample": {n: score(n, pooled) for n in names_}, "model": pooled}
    print("pooled in-sample", json.dumps(report["pooled"]["in_sample"]), flush=True)
    if out:
        out.write_text(json.dumps(report, indent=1))
    if model_out:
        shipped = {
            **pooled,
            "about": "chain-pair score (kg_platform/retrieval/rerank/chain_pair.py): logistic "
            "regression fitted on the pools of the three multi-hop dev sets "
            "(lab/results/2026-12-03/chain-pair/)",
            "rotations": [
                {k: row[k] for k in ("check", "fit_on", "check_model", "check_shipped", "wins")}
                for row in report["rotations"]
            ],
        }
        model_out.write_text(json.dumps(shipped, indent=1) + "\n")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("rotations")
    r.add_argument("files", nargs="+", type=Path)
    r.add_argument("--out", type=Path)
    r.add_argument("--model", type=Path, help="write the model fitted on all the files here")
    r.add_argument("--anchors", type=int, default=ANCHORS, help="anchors the features read")
    r.add_argument("--no-hop", action="store_true", help="leave out the MDR hop scores")
    r.add_argument("--two-step", action="store_true", help="add the two-step link per anchor")
    r.add_argument("--entity-candidates", type=int, help="candidates read when `entity` ran")
    args = p.parse_args(argv)
    shape = ChainShape(anchors=args.anchors, hop=not args.no_hop, two_step=args.two_step)
    rotations(args.files, args.out, args.model, shape, args.entity_candidates)


if __name__ == "__main__":
    main()
