"""``kgp lab bench ingest-engines``: the same files ingested in-process and on Ray, in one run.

Each engine ingests the same files into a throw-away corpus of its own on the configured Neo4j
(after one untimed warm-up ingest: a just-started server writes ~3x slower), and the bench prints
each one's wall time, sources/s and pieces/s and the ratio ``ray / local`` of their rates. For
Ray it also prints the time to start (or join) the cluster apart, because a user running
``kgp ingest --engine ray`` on one machine pays it on every command while a long-lived cluster
pays it once: ``ratio`` leaves it out, ``ratio_with_start`` counts it. The actors' model loading
is inside the timed part either way (every run pays it).
"""

from __future__ import annotations

import time
import uuid
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from kg_platform.config import Settings, with_values
from kg_platform.embedding import get_embedder
from kg_platform.graph.client import GraphClient
from kg_platform.ingest.pipeline import discover, ingest_paths
from kg_platform.ingest.writer import drop_corpus
from kg_platform_lab.bench.layer import without_entity_layer

__all__ = ["format_engine_bench", "run_engine_bench"]


def _with_engine(settings: Settings, engine: str, workers: int | None) -> Settings:
    ingest = with_values(settings.ingest, engine=engine, ray_workers=workers)
    return settings.model_copy(update={"ingest": ingest})


def run_engine_bench(
    settings: Settings,
    paths: list[Path],
    *,
    engines: tuple[str, ...] = ("local", "ray"),
    limit: int | None = None,
    workers: int | None = None,
) -> dict[str, Any]:
    settings = without_entity_layer(settings)  # the engines' pipelines, without the NLP step
    files = discover(paths).files[: limit or None]
    if not files:
        raise ValueError("no files to ingest under the given paths")
    embedder = get_embedder(settings.embedding)
    embedder.embed(["warm up the model"])
    tag = uuid.uuid4().hex[:8]
    out: dict[str, Any] = {"files": len(files), "engines": {}}
    with GraphClient.from_settings(settings) as graph:
        warm = f"bench-engines-{tag}-warm-up"
        try:
            ingest_paths(graph, settings, files[:3], warm, embedder=embedder)
        finally:
            drop_corpus(graph, warm)
        for engine in engines:
            corpus = f"bench-engines-{tag}-{engine}"
            run_settings = _with_engine(settings, engine, workers)
            start_s = 0.0
            with ExitStack() as stack:
                if engine == "ray":
                    from kg_platform.ingest.ray_engine import RayCluster

                    started = time.perf_counter()
                    ray = stack.enter_context(RayCluster(run_settings))
                    start_s = time.perf_counter() - started
                    out["ray_cpus"] = float(ray.cluster_resources().get("CPU", 0))
                try:
                    started = time.perf_counter()
                    report = ingest_paths(graph, run_settings, files, corpus, embedder=embedder)
                    wall = time.perf_counter() - started
                finally:
                    drop_corpus(graph, corpus)
            sources = len(report.added) + len(report.replaced)
            pieces = report.counts.get("pieces", 0)
            out["engines"][engine] = {
                "status": report.status,
                "sources": sources,
                "pieces": pieces,
                "errors": len(report.errors),
                "wall_s": round(wall, 2),
                "start_s": round(start_s, 2),
                "sources_per_s": round(sources / wall, 2),
                "pieces_per_s": round(pieces / wall, 1),
                "phase_s": report.timings,
            }
    ran = out["engines"]
    if "local" in ran and "ray" in ran:
        local, ray_run = ran["local"], ran["ray"]
        out["ratio"] = round(local["wall_s"] / ray_run["wall_s"], 3)
        out["ratio_with_start"] = round(
            local["wall_s"] / (ray_run["wall_s"] + ray_run["start_s"]), 3
        )
    return out


def format_engine_bench(out: dict[str, Any]) -> list[str]:
    lines = [f"{out['files']} files"]
    for engine, r in out["engines"].items():
        start = f", cluster start {r['start_s']} s" if engine == "ray" else ""
        lines.append(
            f"  {engine:>5}: {r['wall_s']} s{start}; {r['sources_per_s']} sources/s, "
            f"{r['pieces_per_s']} pieces/s ({r['sources']} sources, {r['pieces']} pieces, "
            f"{r['errors']} errors, {r['status']})"
        )
    if "ratio" in out:
        lines.append(
            f"  ray / local rate: {out['ratio']} ({out['ratio_with_start']} counting the "
            f"cluster's start; {out.get('ray_cpus')} Ray CPUs)"
        )
    return lines
