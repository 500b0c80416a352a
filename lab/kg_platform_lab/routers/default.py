"""Default routers: one MoG and one MoGG router trained on several corpora together.

A router trained with ``kgp lab router train`` serves only its own corpus. The default routers are
what any other corpus uses (a user's new corpus included): they ship as package data in
``kg_platform/models/routers/<kind>/`` (``weights.npz`` + ``meta.json``, read in numpy).

Training is split in two steps so the expensive part is done once per corpus:

1. :func:`collect_labels` (``kgp lab router collect``): for each question of one dataset, the best
   snippet of every level in that dataset's corpus (scoped to the question's document for
   document-QA folders), and its similarity to the question's label (spec §1.6). One JSONL record
   per question: ``{dataset, question, sims}``.
2. :func:`train_default` (``kgp lab router train-default``): soft labels from the records of several
   datasets pooled, the MLP trained on the query embedding only (no corpus statistics: the same
   features exist for any corpus), written to a router folder. Leave-one-dataset-out routers
   are the same call with one dataset's records left out.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from kg_platform.errors import EvaluationError
from kg_platform.retrieval.strategies.router import KINDS, n_levels_for
from kg_platform_lab.settings import RouterTrainingSettings, get_lab_settings
from kg_platform_lab.routers.training import (
    best_snippets,
    hitrate,
    label_text,
    read_dataset,
    soft_labels,
    train_mlp,
)

if TYPE_CHECKING:
    from kg_platform.config import Settings
    from kg_platform.embedding.base import Embedder
    from kg_platform.retrieval.base import RetrievalContext


PROBE = "Which section of the report describes how the results were evaluated?"


def _questions(
    ctx: "RetrievalContext", dataset: Path, limit: int | None
) -> tuple[str, list[tuple[str, str, list[str] | None]]]:
    """``(dataset name, [(question, label, scope sources or None)])`` of a QA file or a
    document-QA folder (whose questions are scoped to their document's sources)."""
    from kg_platform_lab.evaluation.docqa import is_docqa_folder, load_docqa

    if is_docqa_folder(dataset):
        from kg_platform_lab.evaluation.harness import document_sources

        qs = load_docqa(dataset)
        scopes = document_sources(ctx.graph, ctx.corpus, qs)
        out = [
            (q.question, " ".join(q.evidence_sets[0]), scopes[q.doc_id])
            for q in qs
            if q.doc_id in scopes and q.evidence_sets
        ]
        return dataset.name, out[:limit]
    rows = read_dataset(dataset)[:limit]
    return dataset.stem, [(r["question"], label_text(r), None) for r in rows]


def collect_labels(
    ctx: "RetrievalContext",
    dataset: Path,
    kind: str,
    out: Path,
    limit: int | None = None,
    echo=print,
    training: RouterTrainingSettings | None = None,
) -> dict[str, Any]:
    """Write one record per question: the label similarity of each level's best snippet
    (compared by ``training.label_scorer``; the lab's ``router`` settings unless given)."""
    if kind not in KINDS:
        raise EvaluationError(f"unknown router kind {kind!r}", hint="use mog or mogg")
    n_levels = n_levels_for(ctx.settings, kind)
    name, questions = _questions(ctx, dataset, limit)
    if not questions:
        raise EvaluationError(
            f"no usable questions in {dataset} for corpus {ctx.corpus!r}",
            hint="ingest the dataset's corpus first (`kgp lab eval` does)",
        )
    t0 = time.time()
    out.parent.mkdir(parents=True, exist_ok=True)
    scorer = (training or get_lab_settings().router).label_scorer
    snippets_of: list[list[str]] = []
    for i, (question, _label, sources) in enumerate(questions):
        ctx.sources = sources
        try:
            snippets_of.append(best_snippets(ctx, question, kind, n_levels))
        finally:
            ctx.sources = None
        if (i + 1) % 25 == 0:
            echo(f"  {name} {kind}: snippets {i + 1}/{len(questions)} ({time.time() - t0:.0f}s)")
    vec_of: dict[str, np.ndarray] = {}
    if scorer != "hitrate":  # embed every distinct label and snippet once, in batches
        texts = list(
            dict.fromkeys([q[1] for q in questions] + [t for sn in snippets_of for t in sn if t])
        )
        for j in range(0, len(texts), 256):
            batch = texts[j : j + 256]
            vec_of.update(zip(batch, ctx.embedder.embed(batch)))
    with out.open("w", encoding="utf-8") as fh:
        for (question, label, _), snippets in zip(questions, snippets_of):
            if scorer == "hitrate":
                sims = [hitrate(label, t) if t else -1.0 for t in snippets]
            else:
                sims = [float(vec_of[label] @ vec_of[t]) if t else -1.0 for t in snippets]
            fh.write(
                json.dumps(
                    {
                        "dataset": name,
                        "corpus": ctx.corpus,
                        "kind": kind,
                        "question": question,
                        "sims": sims,
                        "tokens": [len(t.split()) for t in snippets],
                    }
                )
                + "\n"
            )
    return {
        "dataset": name,
        "kind": kind,
        "questions": len(questions),
        "out": str(out),
        "label_scorer": scorer,
        "seconds": round(time.time() - t0, 1),
    }


def read_records(paths: Iterable[Path]) -> list[dict]:
    recs = []
    for p in paths:
        recs.extend(json.loads(line) for line in Path(p).read_text().splitlines() if line.strip())
    return recs


def level_distribution(levels: Iterable[int], n_levels: int) -> dict[str, int]:
    c = Counter(levels)
    return {str(g): c.get(g, 0) for g in range(1, n_levels + 1)}


def train_default(
    records: Sequence[dict],
    kind: str,
    out_dir: Path,
    settings: "Settings",
    embedder: "Embedder",
    exclude: Sequence[str] = (),
    training: RouterTrainingSettings | None = None,
) -> dict[str, Any]:
    """Train one router on the pooled records (minus the ``exclude`` datasets) into ``out_dir``
    (``weights.npz`` + ``meta.json``, the layout :class:`~kg_platform.retrieval.strategies.router.Router`
    reads). ``training``: the lab's ``router`` settings unless given."""
    from kg_platform.retrieval.strategies.mog import choose_level

    training = training or get_lab_settings().router

    n_levels = n_levels_for(settings, kind)
    recs = [r for r in records if r["kind"] == kind and r["dataset"] not in set(exclude)]
    recs = [r for r in recs if len(r["sims"]) == n_levels]
    if len(recs) < 4:
        raise EvaluationError(
            f"only {len(recs)} {kind} records to train on",
            hint="run `kgp lab router collect` for more datasets",
        )
    X = embedder.embed([r["question"] for r in recs]).astype(np.float32)
    Y = np.stack([soft_labels(r["sims"]) for r in recs]).astype(np.float32)
    result = train_mlp(X, Y, training)
    out_dir.mkdir(parents=True, exist_ok=True)
    # float16 on disk (half the package size); inference upcasts to float32, and every number
    # below (chosen levels, probe) is computed from the saved file, i.e. from what ships.
    np.savez(
        out_dir / "weights.npz",
        **{
            k: (v.detach().cpu().numpy() if hasattr(v, "detach") else np.asarray(v)).astype(
                np.float16
            )
            for k, v in result.state.items()
        },
    )
    from kg_platform.retrieval.strategies.router import Router

    datasets = sorted({r["dataset"] for r in recs})
    meta = {
        "version": "default-" + "+".join(datasets),
        "corpus": None,
        "kind": kind,
        "n_levels": n_levels,
        "dim": int(X.shape[1]),
        "hidden": training.hidden,
        "dropout": training.dropout,
        "embedder": str(settings.embedding.model),
        "features": "query embedding only (no corpus statistics)",
        "label_scorer": training.label_scorer,
        "trained_on": datasets,
    }
    (out_dir / "meta.json").write_text(json.dumps(meta, indent=2))
    router = Router.from_dir(out_dir)
    W = router.weights_batch(X)
    chosen = [choose_level(w, settings.tuning.mog.zero_weight) for w in W]
    per_ds = {}
    for ds in datasets:
        idx = [i for i, r in enumerate(recs) if r["dataset"] == ds]
        per_ds[ds] = {
            "questions": len(idx),
            "chosen": level_distribution((chosen[i] for i in idx), n_levels),
            "label_best": level_distribution((int(np.argmax(Y[i])) + 1 for i in idx), n_levels),
        }
    meta["metrics"] = {**result.metrics, "per_dataset": per_ds}
    # A fixed probe question and the weights/level the saved router gives it: a test reloads the
    # shipped files and checks they still make this decision.
    probe_w = router.weights(embedder.embed([PROBE])[0])
    meta["probe"] = {
        "question": PROBE,
        "weights": [round(float(x), 6) for x in probe_w],
        "level": choose_level(probe_w, settings.tuning.mog.zero_weight),
    }
    (out_dir / "meta.json").write_text(json.dumps(meta, indent=2))
    return meta
