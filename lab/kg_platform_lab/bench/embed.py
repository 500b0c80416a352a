"""``kgp lab bench embed``: the ONNX embedder's speed at several ``embedding.batch_tokens``.

Why: a model call's attention scores grow with texts x length^2, so how many padded word pieces
one call should hold depends on the machine's caches (and on a GPU). This bench times the same
texts at each value against unbounded calls (``batch_size`` texts whatever their length, the
embedder before ``batch_tokens``) in the same run, and prints the speed-up, so a user can choose
the setting for their hardware. Three workloads:

- ``paragraphs``: the QA file's paragraphs as they are (HotpotQA: ~60-120 word pieces);
- ``chunks``: the same text regrouped into ~200-word windows, the size of the chunks ingestion
  embeds from long documents (what a call costs depends on its length, not on its topic);
- ``rerank``: lists of 30 paragraphs through ``embed_tokens``, as the late rerank reads its
  candidates for one question.

Vectors must not change with the setting; the largest difference is reported.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kg_platform.config import Settings, default_cache_dir
from kg_platform.embedding.onnx import OnnxEmbedder, default_threads
from kg_platform_lab.bench.ingest import plain_texts, qa_slice_inputs

#: stands for "no token budget": calls of ``batch_size`` texts, as before ``batch_tokens``
UNBOUNDED = 10**9
CHUNK_WORDS = 200
RERANK_LIST = 30


def bench_texts(settings: Settings, qa_file: Path, limit: int) -> dict[str, list[str]]:
    """The first ``limit`` questions' distinct paragraphs as plain text (the texts ``kgp lab bench
    ingest`` times the model on), and the same words regrouped into chunk-sized windows."""
    paragraphs = plain_texts(qa_slice_inputs(settings, qa_file, limit, "bench-embed"))
    words = " ".join(paragraphs).split()
    chunks = [" ".join(words[i : i + CHUNK_WORDS]) for i in range(0, len(words), CHUNK_WORDS)]
    return {"paragraphs": paragraphs, "chunks": chunks}


def _seconds(run: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """The fastest of ``repeats`` runs (the least disturbed by anything else) and its output."""
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        out = run()
        best = min(best, time.perf_counter() - start)
    return best, out


def run_embed_bench(
    settings: Settings,
    *,
    qa_file: Path,
    limit: int,
    values: Sequence[int] = (512, 1024, 2048),
    repeats: int = 2,
) -> dict[str, Any]:
    """Seconds per workload at each ``batch_tokens`` value and unbounded, and the speed-ups."""
    cfg = settings.embedding
    if cfg.provider != "onnx":
        raise ValueError(
            f"kgp lab bench embed times the ONNX embedder; the configured provider is "
            f"{cfg.provider!r} (set KGP_EMBEDDING__PROVIDER=onnx)"
        )
    embedder = OnnxEmbedder(
        cfg.model,
        cache_dir=default_cache_dir(),
        batch_size=cfg.batch_size,
        threads=cfg.threads,
        quantize=cfg.quantize,
        device=cfg.device,
    )
    texts = bench_texts(settings, qa_file, limit)
    paragraphs = texts["paragraphs"]
    lists = [
        paragraphs[i : i + RERANK_LIST]
        for i in range(0, len(paragraphs) - RERANK_LIST + 1, RERANK_LIST)
    ]
    workloads: dict[str, Callable[[], Any]] = {
        "paragraphs": lambda: embedder.embed(paragraphs),
        "chunks": lambda: embedder.embed(texts["chunks"]),
        "rerank": lambda: [embedder.embed_tokens(batch) for batch in lists],
    }
    embedder.embed(paragraphs[:8])  # load and warm the session, untimed
    seconds: dict[str, dict[str, float]] = {}
    reference: dict[str, np.ndarray] = {}
    worst = 0.0
    for value in (UNBOUNDED, *values):
        embedder.batch_tokens = value
        key = "unbounded" if value == UNBOUNDED else str(value)
        seconds[key] = {}
        for name, run in workloads.items():
            took, out = _seconds(run, repeats)
            seconds[key][name] = round(took, 3)
            if name == "rerank":
                continue
            if name in reference:
                worst = max(worst, float(np.abs(out - reference[name]).max()))
            else:
                reference[name] = out
    return {
        "qa_file": str(qa_file),
        "questions": limit,
        "model": cfg.model,
        "quantize": cfg.quantize,
        "batch_size": cfg.batch_size,
        "configured_batch_tokens": cfg.batch_tokens,
        "threads": cfg.threads or default_threads(),
        "texts": {
            "paragraphs": len(paragraphs),
            "chunks": len(texts["chunks"]),
            "rerank_lists": len(lists),
        },
        "seconds": seconds,
        "speedup_vs_unbounded": {
            key: {
                name: round(seconds["unbounded"][name] / max(took, 1e-9), 2)
                for name, took in row.items()
            }
            for key, row in seconds.items()
            if key != "unbounded"
        },
        "max_vector_difference": worst,
    }


def format_embed_bench(out: dict[str, Any]) -> list[str]:
    n = out["texts"]
    lines = [
        f"{n['paragraphs']} paragraphs, {n['chunks']} ~{CHUNK_WORDS}-word chunks, "
        f"{n['rerank_lists']} rerank lists of {RERANK_LIST} "
        f"({out['model']}, {out['threads']} threads, batch_size {out['batch_size']})",
        "batch_tokens   paragraphs      chunks          rerank          (s, speed-up vs unbounded)",
    ]
    for key, row in out["seconds"].items():
        ups = out["speedup_vs_unbounded"].get(key, {})
        cells = [
            f"{row[name]:7.2f} ({ups[name]:.2f}x)" if ups else f"{row[name]:7.2f}        "
            for name in ("paragraphs", "chunks", "rerank")
        ]
        lines.append(f"{key:>12}   " + "  ".join(cells))
    lines.append(
        f"configured: {out['configured_batch_tokens']}; vectors differ by at most "
        f"{out['max_vector_difference']:.1e} across values"
    )
    return lines
