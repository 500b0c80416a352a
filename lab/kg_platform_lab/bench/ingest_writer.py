"""``kgp lab bench ingest --writer-only``: how much one Neo4j absorbs, and how many embedding
workers it can keep busy.

Scale-out (issue 13) moves parsing, planning and embedding to workers (processes or Ray tasks),
while each source is still written by one transaction to one Neo4j primary. The primary is then
the ceiling, so this bench measures it apart from the model: the plans and their vectors are made
first (and timed: that is one worker's throughput), then only the writer runs, with the same
transaction grouping as the pipeline (``ingest.transaction_rows``), followed by the piece-graph
sync (timed apart: it runs once per ingestion run, not per source). One transaction's worth of
copies is written and dropped first, untimed, so the figure is the primary's steady state
rather than a just-started JVM's (``warm_up_write_s`` reports that cold write).

``workers_per_primary`` = writer sources/s / one worker's sources/s: how many single-process
embedding workers like this one a primary keeps up with. Both sides run on the same machine, so
on a small machine they compete for the same cores; the report says so.
"""

from __future__ import annotations

import os
import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

from kg_platform.config import Settings
from kg_platform.embedding import get_embedder
from kg_platform.graph.client import GraphClient
from kg_platform.ingest.embed import embed_with_settings
from kg_platform.ingest.plan import SourcePlan
from kg_platform.ingest.similar import sync_piece_graph
from kg_platform.ingest.writer import drop_corpus, write_plans
from kg_platform_lab.bench.ingest import default_qa_file, plan_inputs, qa_slice_inputs

__all__ = ["run_writer_bench", "format_writer_bench", "transaction_groups"]


def transaction_groups(plans: list[SourcePlan], max_rows: int) -> list[list[SourcePlan]]:
    """Plans grouped as the pipeline groups them: whole sources, up to ``max_rows`` nodes."""
    groups: list[list[SourcePlan]] = []
    current: list[SourcePlan] = []
    rows = 0
    for plan in plans:
        current.append(plan)
        rows += plan.node_count
        if rows >= max_rows:
            groups.append(current)
            current, rows = [], 0
    if current:
        groups.append(current)
    return groups


def _warm_up(
    graph: GraphClient, settings: Settings, inputs: list[Any], plans: list[SourcePlan], corpus: str
) -> float:
    """Write (then drop) a copy of the first transaction's sources in a corpus of their own.

    Why: the first writes after a server start run cold (JIT, page cache, index structures):
    measured here, 995 sources took 18.6 s on a just-started server and 6.0 s on the next run.
    A primary's ceiling is a steady-state figure, so the cold part is paid (and reported) here.
    The copy is planned again under the other corpus name (ids depend on it) and takes the
    original's vectors row by row: planning is deterministic, so the rows line up.
    """
    first = transaction_groups(plans, settings.ingest.transaction_rows)[0]
    warm_corpus = f"{corpus}-warm-up"
    copies = plan_inputs(
        settings, [replace(inp, corpus=warm_corpus) for inp in inputs[: len(first)]]
    )
    for copy_plan, plan in zip(copies, first, strict=True):
        copy_plan.vectors[copy_plan.source.id] = plan.vectors[plan.source.id]
        for kind in ("sections", "chunks", "pieces"):
            for row, original in zip(getattr(copy_plan, kind), getattr(plan, kind), strict=True):
                copy_plan.vectors[row.id] = plan.vectors[original.id]
    started = time.perf_counter()
    try:
        write_plans(graph, copies, f"bench-{warm_corpus}")
    finally:
        drop_corpus(graph, warm_corpus)
    return time.perf_counter() - started


def run_writer_bench(
    settings: Settings, *, limit: int = 50, qa_file: Path | None = None
) -> dict[str, Any]:
    """Plan + embed (one worker, timed), then write the same plans (timed alone)."""
    qa_file = Path(qa_file or default_qa_file())
    embedder = get_embedder(settings.embedding)
    embedder.embed(["warm up the model"])
    corpus = f"bench-writer-{uuid.uuid4().hex[:8]}"
    started = time.perf_counter()
    inputs = qa_slice_inputs(settings, qa_file, limit, corpus)
    plans = plan_inputs(settings, inputs)
    plan_s = time.perf_counter() - started
    started = time.perf_counter()
    texts = embed_with_settings(plans, embedder, settings)
    embed_s = time.perf_counter() - started
    groups = transaction_groups(plans, settings.ingest.transaction_rows)
    with GraphClient.from_settings(settings) as graph:
        warm_s = _warm_up(graph, settings, inputs, plans, corpus)
        try:
            started = time.perf_counter()
            for group in groups:
                write_plans(graph, group, f"bench-{corpus}")
            write_s = time.perf_counter() - started
            started = time.perf_counter()
            pg = settings.tuning.piece_graph
            sync = sync_piece_graph(graph, corpus, pg.k_graph, pg.t_graph)
            graph_s = time.perf_counter() - started
        finally:
            drop_corpus(graph, corpus)
    sources = len(plans)
    pieces = sum(len(p.pieces) for p in plans)
    nodes = sum(p.node_count for p in plans)
    writer_sps = sources / write_s
    worker_sps = sources / (plan_s + embed_s)
    writer_with_graph_sps = sources / (write_s + graph_s)
    return {
        "qa_file": str(qa_file),
        "questions": limit,
        "corpus": corpus,
        "sources": sources,
        "pieces": pieces,
        "nodes": nodes,
        "transactions": len(groups),
        "texts_embedded": texts,
        "similar_edges": sync.edges,
        "warm_up_write_s": round(warm_s, 2),
        "plan_s": round(plan_s, 2),
        "embed_s": round(embed_s, 2),
        "write_s": round(write_s, 2),
        "piece_graph_s": round(graph_s, 2),
        "writer_sources_per_s": round(writer_sps, 1),
        "writer_pieces_per_s": round(pieces / write_s, 1),
        "writer_nodes_per_s": round(nodes / write_s, 1),
        "writer_with_piece_graph_sources_per_s": round(writer_with_graph_sps, 1),
        "worker_sources_per_s": round(worker_sps, 2),
        "workers_per_primary": round(writer_sps / worker_sps, 2),
        "workers_per_primary_with_piece_graph": round(writer_with_graph_sps / worker_sps, 2),
        "cpus": os.cpu_count(),
        "load_avg_1m": round(os.getloadavg()[0], 2),
        "note": "worker and Neo4j share this machine's cores",
    }


def format_writer_bench(out: dict[str, Any]) -> list[str]:
    return [
        f"{out['sources']} sources ({out['questions']} questions of {Path(out['qa_file']).name}),"
        f" {out['pieces']} pieces, {out['nodes']} nodes in {out['transactions']} transactions",
        f"one worker (plan + embed)  {out['plan_s']} + {out['embed_s']} s  "
        f"{out['worker_sources_per_s']} sources/s",
        f"writer alone               {out['write_s']} s  {out['writer_sources_per_s']} sources/s"
        f"  {out['writer_pieces_per_s']} pieces/s  {out['writer_nodes_per_s']} nodes/s",
        f"piece-graph sync (per run) {out['piece_graph_s']} s  ({out['similar_edges']} edges)",
        f"embedding workers one primary keeps up with: {out['workers_per_primary']} "
        f"({out['workers_per_primary_with_piece_graph']} counting the piece-graph sync)",
        f"machine: {out['cpus']} cpus, load {out['load_avg_1m']} at the end; {out['note']}",
    ]
