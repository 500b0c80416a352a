"""The chain-pair study (lab/results/2026-12-03/chain-pair): a *selective* pair score for the
final ranking, trained to tell a linked gold second hop from a linked distractor.

Over the pools ``chain_study collect`` wrote, every candidate the shipped late rerank reorders
gets a feature row (:func:`features`): its late score and rank, and for each of the shipped
rerank's first two candidates (the anchors, the likely first hops) whether it is that anchor,
its title / entity / references link to it, its MDR hop score (the question read together with
the anchor's text), plus whether the question names its title and the question's shape. A
logistic regression (fixed a priori, nothing tuned: the README's rule) learns which candidates
cover a gold paragraph; the ranking sorts the candidates by its probability.

    python -m kg_platform_lab.rerank.chain_pair rotations pools/hotpotqa.jsonl \
        pools/2wikimultihopqa.jsonl pools/musique.jsonl --out rotations.json
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

import numpy as np

from kg_platform_lab.rerank.chain_rerank import link_matrices, names

ANCHORS = 2
#: words that mark a comparison question ("Which is older, A or B?", "Are both X and Y ...?")
COMPARISON = re.compile(
    r"\b(both|same|either|neither|older|younger|earlier|later|first|longer|shorter|"
    r"larger|smaller|bigger|higher|lower|more|less|fewer)\b|\bor\b|\bthan\b",
    re.IGNORECASE,
)
LINKS = ("title", "entity", "refs")


def feature_names() -> list[str]:
    out = ["late", "rank"]
    for a in range(ANCHORS):
        out += [f"is_a{a}", *(f"{k}_a{a}" for k in LINKS), f"hop_a{a}"]
    out += ["margin", "q_names_c", "q_names_a0", "comparison", "q_words"]
    for k in LINKS:
        out += [f"{k}_x_qnames", f"{k}_x_comparison", f"{k}_x_late"]
    return out


def _min_max(values: np.ndarray) -> np.ndarray:
    lo, hi = float(values.min()), float(values.max())
    return (values - lo) / (hi - lo) if hi > lo else np.ones_like(values)


def refs_matrix(items: list[dict[str, Any]]) -> np.ndarray:
    """1 where two candidates' sources are joined by a REFERENCES edge (either direction)."""
    n = len(items)
    out = np.zeros((n, n), dtype=np.float64)
    for i in range(n):
        ri = set(items[i].get("refs") or [])
        si = items[i].get("source") or ""
        for j in range(i + 1, n):
            sj = items[j].get("source") or ""
            if si and sj and si != sj and (sj in ri or si in set(items[j].get("refs") or [])):
                out[i, j] = out[j, i] = 1.0
    return out


def features(
    question: str,
    items: list[dict[str, Any]],
    late: np.ndarray,
    hop: np.ndarray | None,
    anchors: list[int],
) -> np.ndarray:
    """One row per candidate (``items``: the first ``n``, each with ``text``, ``title``,
    ``entities``, ``source``, ``refs``; ``late``: their shipped late scores; ``hop``: one row
    per anchor of min-max-scaled hop scores, or None; ``anchors``: the shipped order's first
    indexes). Columns: :func:`feature_names`."""
    from kg_platform_lab.rerank.chain_rerank import Candidate

    n = len(items)
    cands = [
        Candidate(
            id=it["id"],
            text=it["text"],
            title=it.get("title") or "",
            entities=tuple(it.get("entities") or ()),
        )
        for it in items
    ]
    title, entity = link_matrices(question, cands)
    refs = refs_matrix(items)
    late_mm = _min_max(np.asarray(late, dtype=np.float64))
    order = sorted(range(n), key=lambda j: (-round(float(late[j]), 9), j))
    rank = np.zeros(n)
    for pos, j in enumerate(order):
        rank[j] = 1.0 - pos / max(n - 1, 1)
    q = question.lower()
    q_names_c = np.asarray([1.0 if names(c.title, q) else 0.0 for c in cands])
    comparison = 1.0 if COMPARISON.search(question) else 0.0
    q_words = min(len(question.split()), 40) / 40.0
    srt = sorted(late_mm, reverse=True)
    margin = float(srt[0] - srt[2]) if n > 2 else 0.0
    cols: list[np.ndarray] = [late_mm, rank]
    any_link = {k: np.zeros(n) for k in LINKS}
    for r in range(ANCHORS):
        a = anchors[r] if r < len(anchors) else None
        is_a = np.zeros(n)
        links = {k: np.zeros(n) for k in LINKS}
        h = np.zeros(n)
        if a is not None:
            is_a[a] = 1.0
            links = {"title": title[a].copy(), "entity": entity[a].copy(), "refs": refs[a].copy()}
            if hop is not None and r < len(hop):
                h = np.asarray(hop[r], dtype=np.float64)[:n].copy()
                h[a] = 0.0
        cols.append(is_a)
        for k in LINKS:
            cols.append(links[k])
            any_link[k] = np.maximum(any_link[k], links[k])
        cols.append(h)
    q_names_a0 = 1.0 if anchors and names(cands[anchors[0]].title, q) else 0.0
    cols += [
        np.full(n, margin),
        q_names_c,
        np.full(n, q_names_a0),
        np.full(n, comparison),
        np.full(n, q_words),
    ]
    for k in LINKS:
        cols += [any_link[k] * q_names_c, any_link[k] * comparison, any_link[k] * late_mm]
    return np.stack(cols, axis=1)


# ----------------------------------------------------------------------------------- offline
def _record_rows(rec: dict[str, Any], settings: Any) -> tuple[np.ndarray, list[int], np.ndarray]:
    """(feature rows, shipped order, late scores) of a pool record's first ``n`` candidates."""
    from kg_platform.retrieval.rerank.late_interaction import combine, min_max
    from kg_platform.retrieval.rerank.weights import weights_for

    n = rec["n"]
    head = rec["items"][:n]
    late = combine(
        weights_for(rec["chosen"], settings),
        np.asarray([it["cos"] for it in head]),
        np.asarray([it["sim"] for it in head]),
        np.asarray([it["score"] for it in head]),
    )
    order = sorted(range(len(head)), key=lambda j: (-round(float(late[j]), 9), j))
    anchors = order[:ANCHORS]
    hop = None
    if rec.get("hop_cos") and list(rec["anchors"][:ANCHORS]) == anchors:
        hop = np.stack(
            [
                min_max(np.asarray(rec["hop_cos"][r][:n]))
                + min_max(np.asarray(rec["hop_sim"][r][:n]))
                for r in range(min(ANCHORS, len(rec["hop_cos"])))
            ]
        )
    return features(rec["question"], head, late, hop, anchors), order, late


def _labels(rec: dict[str, Any], gold: Any) -> np.ndarray:
    from kg_platform_lab.evaluation.metrics import normalise

    return np.asarray(
        [
            1.0 if any(f.covered_by(normalise(it["text"])) for f in gold) else 0.0
            for it in rec["items"][: rec["n"]]
        ]
    )


def fit(x: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    """The rule's model: standardised features, L2 logistic regression, C = 1."""
    from sklearn.linear_model import LogisticRegression

    mean = x.mean(axis=0)
    std = x.std(axis=0)
    std[std == 0] = 1.0
    model = LogisticRegression(C=1.0, max_iter=2000)
    model.fit((x - mean) / std, y)
    return {
        "features": feature_names(),
        "mean": mean.tolist(),
        "scale": std.tolist(),
        "coef": model.coef_[0].tolist(),
        "intercept": float(model.intercept_[0]),
    }


def logits(model: dict[str, Any], x: np.ndarray) -> np.ndarray:
    w = np.asarray(model["coef"])
    return ((x - np.asarray(model["mean"])) / np.asarray(model["scale"])) @ w + model["intercept"]


def rotations(files: list[Path], out: Path | None) -> None:
    from kg_platform.config import get_settings
    from kg_platform_lab.rerank import chain_study

    settings = get_settings()
    chain_study._SETTINGS = settings
    data: dict[str, Any] = {}
    for f in files:
        recs = [json.loads(line) for line in f.open(encoding="utf-8")]
        gold = chain_study._gold(f.stem)
        rows = [(_record_rows(r, settings), _labels(r, gold[r["id"]])) for r in recs]
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

    report: dict[str, Any] = {"shipped": {name: score(name, None) for name in data}}
    print("shipped", json.dumps(report["shipped"]), flush=True)
    names_ = list(data)
    report["rotations"] = []
    for check in names_:
        fit_on = [n for n in names_ if n != check]
        x = np.concatenate([r[0][0] for n in fit_on for r in data[n][2]])
        y = np.concatenate([r[1] for n in fit_on for r in data[n][2]])
        model = fit(x, y)
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
    pooled = fit(x, y)
    report["pooled"] = {"in_sample": {n: score(n, pooled) for n in names_}, "model": pooled}
    print("pooled in-sample", json.dumps(report["pooled"]["in_sample"]), flush=True)
    if out:
        out.write_text(json.dumps(report, indent=1))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("rotations")
    r.add_argument("files", nargs="+", type=Path)
    r.add_argument("--out", type=Path)
    args = p.parse_args(argv)
    rotations(args.files, args.out)


if __name__ == "__main__":
    main()
