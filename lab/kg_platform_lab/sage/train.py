"""Training the SAGE segmenter head on CPU (the SAGE paper).

The sentence embedder stays frozen: every distinct sentence is embedded once (cached as .npy under
the user cache dir), so an epoch over ~15k pairs is a fraction of a second and the shipped artifact
is only the MLP head (< 1 MB as float16). Fine-tuning the embedder (the paper updates both) would
change the retrieval embedder too or ship a second 90 MB model, so it is not done here.

Loss: binary cross-entropy on the logit (the paper uses MSE on a sigmoid score; with a sigmoid
output both target the same probability, and BCE gives steadier gradients near 0 and 1).
The cut threshold ``ss`` is calibrated on the validation documents only (min of mean Pk and
WindowDiff), with the coarse packing of ``segment.sage_coarse_tokens`` in place as at inference.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from kg_platform.segmenting.sage import (
    BoundaryModel,
    SemanticSegmenter,
    default_model_dir,
    load_model,
    sage_cuts,
    save_model,
    segmenter_params,
)
from kg_platform_lab.sage.data import (
    EmbeddingCache,
    Pair,
    SegDocument,
    build_pairs,
    load_sage_data,
)

if TYPE_CHECKING:
    from kg_platform.config import Settings
    from kg_platform.embedding import Embedder

log = logging.getLogger(__name__)

__all__ = ["EmbeddingCache", "TrainResult", "train_head", "train_sage"]


@dataclass
class TrainResult:
    model: BoundaryModel
    threshold: float
    metrics: dict[str, Any] = field(default_factory=dict)


def _pair_arrays(
    cache: EmbeddingCache, pairs: list[Pair]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x1 = cache.get([p.s1 for p in pairs])
    x2 = cache.get([p.s2 for p in pairs])
    y = np.asarray([p.label for p in pairs], dtype=np.float32)
    return x1, x2, y


def train_head(
    x1: np.ndarray,
    x2: np.ndarray,
    y: np.ndarray,
    vx1: np.ndarray,
    vx2: np.ndarray,
    vy: np.ndarray,
    *,
    hidden: int = 256,
    dropout: float = 0.1,
    epochs: int = 20,
    lr: float = 1e-3,
    weight_decay: float = 1e-2,
    batch_size: int = 256,
    seed: int = 13,
    embedder: str = "all-MiniLM-L6-v2",
    patience: int = 4,
    progress: Callable[[str], None] | None = None,
) -> tuple[BoundaryModel, dict[str, Any]]:
    """Fit the MLP head with BCE and AdamW; keep the epoch with the lowest validation loss.

    Pairs keep their order (no swapped copies): a boundary is "end of one paragraph, start of
    the next", and the head may learn that direction.
    """
    import torch

    torch.manual_seed(seed)
    model = BoundaryModel.new(x1.shape[1], hidden=hidden, dropout=dropout, embedder=embedder)
    head = model.head
    opt = torch.optim.AdamW(head.parameters(), lr=lr, weight_decay=weight_decay)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    t1, t2, ty = (torch.from_numpy(a) for a in (x1, x2, y))
    v1, v2, vyt = (torch.from_numpy(a) for a in (vx1, vx2, vy))
    gen = torch.Generator().manual_seed(seed)
    best: dict[str, Any] = {"val_loss": float("inf")}
    history = []
    stale = 0
    for epoch in range(epochs):
        head.train()
        order = torch.randperm(len(ty), generator=gen)
        total = 0.0
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            opt.zero_grad()
            loss = loss_fn(head(t1[idx], t2[idx]), ty[idx])
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
        head.eval()
        with torch.inference_mode():
            logits = head(v1, v2)
            val_loss = float(loss_fn(logits, vyt))
            val_acc = float(((logits > 0).float() == vyt).float().mean())
        row = {
            "epoch": epoch + 1,
            "train_loss": total / len(ty),
            "val_loss": val_loss,
            "val_accuracy": val_acc,
        }
        history.append(row)
        if progress:
            progress(
                f"epoch {epoch + 1}: train loss {row['train_loss']:.4f}  "
                f"val loss {val_loss:.4f}  val acc {val_acc:.4f}"
            )
        if val_loss < best["val_loss"] - 1e-5:
            best = {
                "val_loss": val_loss,
                "val_accuracy": val_acc,
                "epoch": epoch + 1,
                "state": {k: v.clone() for k, v in head.state_dict().items()},
            }
            stale = 0
        else:
            stale += 1
            if stale >= patience:
                break
    head.load_state_dict(best.pop("state"))
    head.eval()
    return model, {**best, "history": history}


def calibrate_sage_threshold(
    segmenter: SemanticSegmenter, docs: list[SegDocument], cache: EmbeddingCache
) -> tuple[float, float]:
    """ss minimising mean (Pk + WindowDiff) / 2 on validation documents, with the segmenter's
    coarse size and mode in place as at inference. Use validation documents only."""
    from kg_platform_lab.evaluation.segmentation import evaluate_cuts

    scores, counts = [], []
    for doc in docs:
        sentences = list(doc.sentences)
        scores.append(segmenter.score_adjacent(sentences, cache.get(sentences)))
        counts.append(segmenter._count_tokens(sentences))
    best = (segmenter.threshold, float("inf"))
    for t in np.round(np.arange(0.02, 0.99, 0.02), 2):
        cuts = [
            sage_cuts(sc, tc, float(t), segmenter.coarse_tokens, segmenter.coarse_mode)
            for sc, tc in zip(scores, counts)
        ]
        pk_, wd = evaluate_cuts(docs, cuts)
        if (pk_ + wd) / 2 < best[1] - 1e-12:
            best = (float(t), (pk_ + wd) / 2)
    return best


def train_sage(
    settings: "Settings",
    bench: Path,
    out: Path,
    *,
    seed: int = 13,
    epochs: int = 20,
    hidden: int = 256,
    lr: float = 1e-3,
    max_pairs: int | None = None,
    embedder: "Embedder | None" = None,
    progress: Callable[[str], None] | None = None,
) -> TrainResult:
    """Build data, embed (cached), train, calibrate ss on validation, save the artifact to ``out``."""
    say = progress or (lambda msg: log.info(msg))
    t_start = time.perf_counter()
    if embedder is None:
        from kg_platform.embedding import get_embedder

        embedder = get_embedder(settings.embedding)
    data = load_sage_data(bench, seed=seed)
    train_pairs = build_pairs(data.paragraphs["train"], seed=seed, max_pairs=max_pairs)
    val_pairs = build_pairs(data.paragraphs["val"], seed=seed + 1)
    say(
        f"pairs: train {len(train_pairs)}, val {len(val_pairs)}; "
        f"validation documents {len(data.documents['val'])}"
    )
    cache = EmbeddingCache(embedder, Path(settings.cache_dir) / "sage")
    sentences = sorted(
        {s for p in train_pairs + val_pairs for s in (p.s1, p.s2)}
        | {s for d in data.documents["val"] for s in d.sentences}
    )
    t0 = time.perf_counter()
    cache.add(sentences)
    embed_s = time.perf_counter() - t0
    say(f"sentence vectors: {len(sentences)} ({embed_s:.1f}s, cached under {cache.directory})")
    x1, x2, y = _pair_arrays(cache, train_pairs)
    vx1, vx2, vy = _pair_arrays(cache, val_pairs)
    t0 = time.perf_counter()
    model, fit = train_head(
        x1,
        x2,
        y,
        vx1,
        vx2,
        vy,
        hidden=hidden,
        epochs=epochs,
        lr=lr,
        seed=seed,
        embedder=embedder.model_name,
        progress=say,
    )
    train_s = time.perf_counter() - t0
    # start from the shipped model's calibration (or the lab's tuning of it)
    start, coarse_tokens, coarse_mode = segmenter_params(
        settings, load_model(default_model_dir()).meta
    )
    segmenter = SemanticSegmenter(
        model, cache.embed, threshold=start, coarse_tokens=coarse_tokens, coarse_mode=coarse_mode
    )
    threshold, val_err = calibrate_sage_threshold(segmenter, data.documents["val"], cache)
    say(f"calibrated ss = {threshold:.2f} (validation mean of Pk and WindowDiff {val_err:.4f})")
    kinds: dict[str, int] = {}
    for p in train_pairs:
        kinds[p.kind] = kinds.get(p.kind, 0) + 1
    metrics = {
        "val_pair_accuracy": fit["val_accuracy"],
        "val_pair_loss": fit["val_loss"],
        "best_epoch": fit["epoch"],
        "history": fit["history"],
        "val_segmentation_error": val_err,
        "train_pairs": len(train_pairs),
        "train_pair_kinds": kinds,
        "val_pairs": len(val_pairs),
        "sentences_embedded": len(sentences),
        "embed_seconds": round(embed_s, 1),
        "train_seconds": round(train_s, 1),
        "total_seconds": round(time.perf_counter() - t_start, 1),
    }
    model.meta.update(
        {
            "threshold": threshold,
            "coarse_tokens": coarse_tokens,
            "coarse_mode": coarse_mode,
            "seed": seed,
            "loss": "bce",
            "embedder_frozen": True,
            "metrics": metrics,
            "data": "bench/dev corpus paragraphs (hotpotqa, 2wikimultihopqa, musique, pubmedqa) + "
            "bench/documents prose; split by question/article, seeded",
        }
    )
    save_model(model, out)
    say(f"saved SAGE model to {out}")
    return TrainResult(model=model, threshold=threshold, metrics=metrics)
