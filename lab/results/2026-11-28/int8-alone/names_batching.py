"""Entity names through the int8 copy: batched (as ingestion embeds them) against one per call.

Dynamic quantisation scales a model call's activations by all the texts in it, so a name's int8
vector depends on the names embedded beside it. This measures by how much, and what reading each
name alone would cost, on 4,000 entity names of the local `qa-late-hotpotqa` corpus.
Run from the repository root with the local Neo4j up:
`.venv/bin/python lab/results/2026-11-28/int8-alone/names_batching.py`
"""

from __future__ import annotations

import os
import time

import numpy as np

import kg_platform.embedding.onnx as onnx_embedder
from kg_platform.config import EmbeddingSettings, get_settings
from kg_platform.embedding.base import get_embedder, quantized_embedder
from kg_platform.graph.client import GraphClient


def cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system


def one_per_call(lengths: list[int], batch_size: int, batch_tokens: int) -> list[tuple[int, int]]:
    return [(i, i + 1) for i in range(len(lengths))]


def main() -> None:
    with GraphClient.from_settings(get_settings()) as graph:
        rows = graph.read_raw(
            "MATCH (e:Entity {corpus: $corpus}) RETURN e.name AS name LIMIT 4000",
            corpus="qa-late-hotpotqa",
        )
    names = [str(r["name"]) for r in rows]
    settings = EmbeddingSettings()
    int8 = quantized_embedder(get_embedder(settings), settings, "int8")
    batched_split = onnx_embedder.split_batches
    vectors: dict[str, np.ndarray] = {}
    for round_ in range(3):
        for label, split in (("batched", batched_split), ("one per call", one_per_call)):
            onnx_embedder.split_batches = split  # type: ignore[assignment]
            start_cpu, start_wall = cpu_seconds(), time.perf_counter()
            vectors[label] = int8.embed(names)
            print(
                f"round {round_}: {label}: {cpu_seconds() - start_cpu:.2f} CPU-s, "
                f"{time.perf_counter() - start_wall:.2f} s wall"
            )
    onnx_embedder.split_batches = batched_split
    gap = 1.0 - np.sum(vectors["batched"] * vectors["one per call"], axis=1)
    print(
        f"{len(names)} names; 1 - cosine(batched, alone): mean {gap.mean():.4f}, "
        f"p99 {np.quantile(gap, 0.99):.4f}, max {gap.max():.4f}"
    )


if __name__ == "__main__":
    main()
