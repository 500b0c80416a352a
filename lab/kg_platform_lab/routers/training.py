"""Training of a corpus's MoG / MoGG router (MoG paper), behind ``kgp lab router train``.

For every training question, the single best snippet of each level is compared with the
question's label text (gold supporting sentences, else question + answer); the best level gets
soft label 0.8, the second 0.2, the rest 0; the MLP's sigmoid outputs are trained with binary
cross-entropy summed over levels, Adam (lr 1e-3), with early stopping on a validation split. The
result is saved next to a numpy copy of its weights and registered as ``(:Router)``, which
:mod:`kg_platform.retrieval.strategies.router` loads at query time without torch.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from kg_platform.errors import EvaluationError, RetrievalError
from kg_platform.retrieval.strategies.router import KINDS, n_levels_for, save_router_state
from kg_platform_lab.settings import RouterTrainingSettings, get_lab_settings

if TYPE_CHECKING:
    import torch

    from kg_platform.retrieval.base import RetrievalContext


# --------------------------------------------------------------------------- pure pieces
def soft_labels(sims: Sequence[float], best: float = 0.8, second: float = 0.2) -> np.ndarray:
    """0.8 on the most similar level, 0.2 on the second, 0 elsewhere (ties: lower level wins)."""
    sims = np.asarray(sims, dtype=np.float64)
    out = np.zeros(len(sims), dtype=np.float32)
    if len(sims) == 0:
        return out
    order = sorted(range(len(sims)), key=lambda i: (-sims[i], i))
    out[order[0]] = best
    if len(sims) > 1:
        out[order[1]] = second
    return out


def bce_sum(w: np.ndarray, sl: np.ndarray, eps: float = 1e-7) -> float:
    """l_bce = sum_i -[sl_i log w_i + (1 - sl_i) log(1 - w_i)] (MoG paper), numpy reference."""
    w = np.clip(np.asarray(w, dtype=np.float64), eps, 1 - eps)
    sl = np.asarray(sl, dtype=np.float64)
    return float(-(sl * np.log(w) + (1 - sl) * np.log(1 - w)).sum())


def hitrate(label: str, snippet: str) -> float:
    """Fraction of the label's word tokens that occur in the snippet (our choice; the MoG paper leaves it open)."""
    import re

    toks = re.findall(r"\w+", label.lower())
    if not toks:
        return 0.0
    have = set(re.findall(r"\w+", snippet.lower()))
    return sum(t in have for t in toks) / len(toks)


def label_text(row: dict) -> str:
    """The raw label: gold supporting sentences when the dataset has them, else question+answer."""
    facts = row.get("supporting_facts") or []
    if facts and row.get("paragraphs"):
        gold_idx = {p["idx"] for p in row["paragraphs"] if p.get("is_supporting")}
        texts = []
        for title, i in facts:
            for p in row["paragraphs"]:
                if (
                    p["title"] == title
                    and (not gold_idx or p["idx"] in gold_idx)
                    and 0 <= i < len(p["sentences"])
                ):
                    texts.append(p["sentences"][i].strip())
                    break
        if texts:
            return " ".join(dict.fromkeys(texts))
    return f"{row['question']} {row.get('answer', '')}".strip()


# --------------------------------------------------------------------------- the model
def build_mlp(dim: int, n_levels: int, hidden: int, dropout: float) -> "torch.nn.Module":
    """``Linear(d,h)-ReLU-Dropout-Linear(h,n)-Sigmoid`` (our choice; the MoG paper leaves it open)."""
    from torch import nn

    return nn.Sequential(
        nn.Linear(dim, hidden),
        nn.ReLU(),
        nn.Dropout(dropout),
        nn.Linear(hidden, n_levels),
        nn.Sigmoid(),
    )


def bce_sum_torch(w: "torch.Tensor", sl: "torch.Tensor") -> "torch.Tensor":
    """Summed-over-levels BCE, averaged over the batch."""
    import torch

    return torch.nn.functional.binary_cross_entropy(w, sl, reduction="none").sum(dim=1).mean()


@dataclass
class TrainResult:
    state: dict
    metrics: dict[str, Any]


def train_mlp(X: np.ndarray, Y: np.ndarray, training: RouterTrainingSettings) -> TrainResult:
    """Adam on the summed BCE with early stopping on a validation split; best state kept."""
    import torch

    if len(X) < 4:
        raise EvaluationError(
            f"only {len(X)} usable training questions; a router needs more",
            hint="use a dataset file with more questions for this corpus",
        )
    gen = np.random.default_rng(training.seed)
    torch.manual_seed(training.seed)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a tiny MLP: thread hand-offs cost more than they save
    try:
        return _train(X, Y, training, gen)
    finally:
        torch.set_num_threads(threads)


def _train(
    X: np.ndarray, Y: np.ndarray, cfg: RouterTrainingSettings, gen: np.random.Generator
) -> TrainResult:
    import torch

    idx = gen.permutation(len(X))
    n_val = max(1, int(round(len(X) * cfg.val_fraction)))
    val, tr = idx[:n_val], idx[n_val:]
    Xt, Yt = torch.tensor(X[tr]), torch.tensor(Y[tr])
    Xv, Yv = torch.tensor(X[val]), torch.tensor(Y[val])
    model = build_mlp(X.shape[1], Y.shape[1], cfg.hidden, cfg.dropout)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    best = (float("inf"), 0, None, float("inf"))
    epoch = 0
    for epoch in range(1, cfg.max_epochs + 1):
        model.train()
        opt.zero_grad()
        loss = bce_sum_torch(model(Xt), Yt)
        loss.backward()
        opt.step()
        model.eval()
        with torch.no_grad():
            vloss = float(bce_sum_torch(model(Xv), Yv))
        if vloss < best[0] - 1e-5:
            best = (
                vloss,
                epoch,
                {k: v.clone() for k, v in model.state_dict().items()},
                float(loss.detach()),
            )
        elif epoch - best[1] >= cfg.patience:
            break
    model.load_state_dict(best[2])
    model.eval()
    with torch.no_grad():
        wv = model(Xv).numpy()
    val_top1 = float(np.mean(wv.argmax(1) == Y[val].argmax(1)))
    return TrainResult(
        best[2],
        {
            "val_loss": best[0],
            "train_loss": best[3],
            "best_epoch": best[1],
            "epochs": epoch,
            "n_train": int(len(tr)),
            "n_val": int(len(val)),
            "val_top1": val_top1,
        },
    )


# --------------------------------------------------------------------------- training job
def read_dataset(path: Path) -> list[dict[str, Any]]:
    from kg_platform_lab.qa_file import read_qa_rows

    rows = [row for _, row in read_qa_rows(path)]
    if not rows:
        raise EvaluationError(f"{path} has no questions", hint="each line needs a 'question' field")
    return rows


def best_snippets(ctx: "RetrievalContext", query: str, kind: str, n_levels: int) -> list[str]:
    """S_best[g]: the single best snippet of each level g for ``query`` (BM25, MoG paper)."""
    from kg_platform.retrieval.strategies.mog import CorpusPlan, MoGStrategy, one_hot

    corpus = ctx.corpus
    out = []
    if kind == "mog":
        strat = MoGStrategy(ctx)
        for g in range(1, n_levels + 1):
            items = strat.run(query, 1, [CorpusPlan(corpus, one_hot(g, n_levels), g)])
            out.append(items[0].text if items else "")
        return out
    from kg_platform.retrieval.strategies.mogg import MoGGStrategy

    strat = MoGGStrategy(ctx)
    for g in range(1, n_levels + 1):
        items = strat.run(query, 1, [CorpusPlan(corpus, one_hot(g, n_levels), g)])
        out.append(items[0].text if items else "")
    return out


def train_router(
    ctx: "RetrievalContext",
    dataset: Path,
    kind: str = "mog",
    limit: int | None = None,
    echo=print,
    training: RouterTrainingSettings | None = None,
) -> dict[str, Any]:
    """Build soft labels for the dataset's questions, train, save and register the router
    (``training``: the lab's ``router`` settings unless given)."""
    import torch

    training = training or get_lab_settings().router

    if kind not in KINDS:
        raise RetrievalError(
            f"unknown router kind {kind!r}", hint="router kinds are 'mog' and 'mogg'"
        )
    if not ctx.corpus:
        raise RetrievalError(
            "a router is trained for one corpus", hint="name the corpus it routes for"
        )
    settings = ctx.settings
    n_levels = n_levels_for(settings, kind)
    rows = read_dataset(dataset)[:limit]
    t0 = time.time()
    queries, labels, sims = [], [], []
    for i, row in enumerate(rows):
        snippets = best_snippets(ctx, row["question"], kind, n_levels)
        label = label_text(row)
        if training.label_scorer == "hitrate":
            s = [hitrate(label, t) if t else -1.0 for t in snippets]
        else:
            vecs = ctx.embedder.embed([label, *[t or " " for t in snippets]])
            s = [float(vecs[0] @ v) if t else -1.0 for v, t in zip(vecs[1:], snippets)]
        queries.append(row["question"])
        labels.append(label)
        sims.append(s)
        if (i + 1) % 25 == 0:
            echo(f"  soft labels {i + 1}/{len(rows)} ({time.time() - t0:.0f}s)")
    X = ctx.embedder.embed(queries).astype(np.float32)
    Y = np.stack([soft_labels(s) for s in sims]).astype(np.float32)
    result = train_mlp(X, Y, training)
    version = time.strftime("%Y%m%d%H%M%S", time.gmtime())
    path = settings.data_dir / "routers" / ctx.corpus / f"{kind}-{version}"
    path.mkdir(parents=True, exist_ok=True)
    torch.save(result.state, path / "model.pt")
    save_router_state(result.state, path)
    model = build_mlp(X.shape[1], n_levels, training.hidden, training.dropout)
    model.load_state_dict(result.state)
    model.eval()
    with torch.no_grad():
        W = model(torch.tensor(X)).numpy()
    from kg_platform.retrieval.strategies.mog import choose_level

    chosen = Counter(choose_level(w, settings.tuning.mog.zero_weight) for w in W)
    label_best = Counter(int(np.argmax(y)) + 1 for y in Y)
    metrics = {
        **result.metrics,
        "dataset": str(dataset),
        "questions": len(rows),
        "label_scorer": training.label_scorer,
        "chosen_level_distribution": {str(g): chosen.get(g, 0) for g in range(1, n_levels + 1)},
        "label_best_level_distribution": {
            str(g): label_best.get(g, 0) for g in range(1, n_levels + 1)
        },
        "mean_weights": [float(x) for x in W.mean(0)],
        "seconds": round(time.time() - t0, 1),
    }
    meta = {
        "version": version,
        "corpus": ctx.corpus,
        "kind": kind,
        "n_levels": n_levels,
        "dim": int(X.shape[1]),
        "hidden": training.hidden,
        "dropout": training.dropout,
        "embedder": ctx.embedder.model_name,
        "metrics": metrics,
    }
    (path / "meta.json").write_text(json.dumps(meta, indent=2))
    router_id = f"{ctx.corpus}:{kind}:{version}"
    ctx.graph.write(
        "retrieval/mog_router_register",
        id=router_id,
        corpus=ctx.corpus,
        kind=kind,
        version=version,
        path=str(path),
        metrics=json.dumps(metrics),
        n_levels=n_levels,
    )
    ctx.forget_routers()  # the context's next MoG query uses the router just registered
    return {"id": router_id, "path": str(path), **metrics}
