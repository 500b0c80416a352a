"""``kgp lab bench retrieve``: retrieval latency at growing graph sizes, next to one vector query.

A dev corpus is read from the configured (shared) graph and replicated, ids suffixed per copy,
into a SEPARATE ephemeral Neo4j until the piece count reaches each target size, so the shared
server is never bloated. At every size each strategy answers the same queries (texts of sampled
pieces, or a QA file's questions: the routers' weights, hence MoG's work, follow the query's
kind); the query embeddings are computed before timing, so the numbers are Cypher + Python work,
comparable with the single ``db.index.vector.queryNodes`` call measured in the same run:
query by query, round robin through the baseline and the strategies (a baseline timed apart,
first, ran on colder caches and read up to 3x slower than the same query a minute later).

With ``keep`` the replica server lives in that folder and survives the run: the next run with the
same folder and corpus reuses the copies already written (a million pieces take ~20 minutes to
build), so a change to a strategy is re-measured in minutes. A ``(:BenchReplica)`` node records
how many copies are complete; a folder whose piece count disagrees (a run killed mid-copy) is
refused rather than silently measured on a partial copy.
"""

from __future__ import annotations

import logging
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from kg_platform.config import Settings, get_settings
from kg_platform.errors import RetrievalError
from kg_platform.graph.corpus_indexes import (
    corpus_prefix,
    ensure_corpus_indexes,
    label_corpus_nodes,
)
from kg_platform_lab.bench.profile import RecordingGraph, profile_calls

if TYPE_CHECKING:
    from kg_platform.neo4j_server import LocalNeo4j

log = logging.getLogger(__name__)

_NODE_READS = {
    "Source": "MATCH (n:Source {corpus: $corpus}) RETURN properties(n) AS p",
    "Section": "MATCH (n:Section {corpus: $corpus}) RETURN properties(n) AS p",
    "Chunk": "MATCH (n:Chunk {corpus: $corpus}) RETURN properties(n) AS p",
    "Piece": "MATCH (n:Piece {corpus: $corpus}) RETURN properties(n) AS p",
}
_EDGE_READS = {  # name: (query, type, start label, end label)
    "src_sec": (
        "MATCH (a:Source {corpus: $corpus})-[:HAS_SECTION]->(b:Section) RETURN a.id AS a, b.id AS b, null AS s",
        "HAS_SECTION",
        "Source",
        "Section",
    ),
    "sec_sec": (
        "MATCH (a:Section {corpus: $corpus})-[:HAS_SECTION]->(b:Section) RETURN a.id AS a, b.id AS b, null AS s",
        "HAS_SECTION",
        "Section",
        "Section",
    ),
    "has_chunk": (
        "MATCH (a:Section {corpus: $corpus})-[:HAS_CHUNK]->(b:Chunk) RETURN a.id AS a, b.id AS b, null AS s",
        "HAS_CHUNK",
        "Section",
        "Chunk",
    ),
    "part_of": (
        "MATCH (a:Chunk {corpus: $corpus})-[:PART_OF]->(b:Chunk) RETURN a.id AS a, b.id AS b, null AS s",
        "PART_OF",
        "Chunk",
        "Chunk",
    ),
    "in": (
        "MATCH (a:Piece {corpus: $corpus})-[:IN]->(b:Chunk) RETURN a.id AS a, b.id AS b, null AS s",
        "IN",
        "Piece",
        "Chunk",
    ),
    "similar": (
        "MATCH (a:Piece {corpus: $corpus})-[r:SIMILAR]->(b:Piece) RETURN a.id AS a, b.id AS b, r.score AS s",
        "SIMILAR",
        "Piece",
        "Piece",
    ),
}


#: The baseline every strategy's latency is divided by: one plain vector index query.
_VECTOR_QUERY = (
    "CALL db.index.vector.queryNodes($ix + 'piece_embedding', 10, $qv) "
    "YIELD node, score RETURN node.id AS id, score"
)


class _CachedEmbedder:
    """The real embedder with answers for the bench queries precomputed (not timed)."""

    def __init__(self, inner, texts: list[str]) -> None:
        self.inner = inner
        self.model_name, self.dimension, self.max_tokens = (
            inner.model_name,
            inner.dimension,
            inner.max_tokens,
        )
        self.cache = dict(zip(texts, inner.embed(texts)))

    def embed(self, texts: list[str]) -> np.ndarray:
        if all(t in self.cache for t in texts):
            return np.stack([self.cache[t] for t in texts])
        return self.inner.embed(texts)


def _read_corpus(settings: Settings, corpus: str) -> dict[str, Any]:
    from kg_platform.graph import GraphClient

    with GraphClient.from_settings(settings) as g:
        nodes = {
            label: [r["p"] for r in g.read_raw(q, corpus=corpus)]
            for label, q in _NODE_READS.items()
        }
        edges = {
            name: [(r["a"], r["b"], r["s"]) for r in g.read_raw(spec[0], corpus=corpus)]
            for name, spec in _EDGE_READS.items()
        }
    if not nodes["Piece"]:
        raise RetrievalError(
            f"corpus {corpus!r} has no pieces in the configured graph",
            hint="ingest it first (e.g. `kgp lab eval` ingests qa-<dataset>)",
        )
    return {"nodes": nodes, "edges": edges}


def _copy(graph, data: dict[str, Any], copies: range, corpus: str, batch: int = 2000) -> None:
    """Write ``copies`` replicas of the corpus (ids suffixed ``~<copy>``) in large batches.

    Rows are made and written batch by batch, and chunks get their level label as they are
    created, so memory (here and in Neo4j's transactions) stays bounded at a million pieces."""
    id_keys = ("id", "source_id", "section_id", "chunk_id")
    for label, rows in data["nodes"].items():
        out: dict[str, list[dict[str, Any]]] = {}
        for copy in copies:
            for p in rows:
                q = dict(p)
                for key in id_keys:
                    if q.get(key) is not None:
                        q[key] = f"{q[key]}~{copy}"
                q["corpus"] = corpus
                emb = q.pop("embedding", None)
                labels = f"Chunk:L{int(q['level'])}" if label == "Chunk" else label
                group = out.setdefault(labels, [])
                group.append({"props": q, "emb": emb})
                if len(group) >= batch:
                    _create_nodes(graph, labels, group)
                    out[labels] = []
        for labels, group in out.items():
            if group:
                _create_nodes(graph, labels, group)
    for name, rows in data["edges"].items():
        _, rel, la, lb = _EDGE_READS[name]  # labels and types are our constants
        payload: list[dict[str, Any]] = []
        for c in copies:
            payload.extend({"a": f"{a}~{c}", "b": f"{b}~{c}", "s": s} for a, b, s in rows)
            if len(payload) >= 10000:
                _create_edges(graph, rel, la, lb, payload)
                payload = []
        if payload:
            _create_edges(graph, rel, la, lb, payload)


def _complete_copies(graph, corpus: str, per_copy: int) -> int:
    """Copies of ``corpus`` a kept replica server already holds (0 in a new one)."""
    rows = graph.read_raw(
        "OPTIONAL MATCH (r:BenchReplica {corpus: $c}) "
        "RETURN coalesce(r.copies, 0) AS copies, r.per_copy AS per_copy, "
        "COUNT { MATCH (p:Piece {corpus: $c}) } AS pieces",
        c=corpus,
    )
    copies, recorded, pieces = rows[0]["copies"], rows[0]["per_copy"], rows[0]["pieces"]
    if pieces != copies * per_copy or (recorded is not None and recorded != per_copy):
        raise RetrievalError(
            f"the kept bench server holds {pieces} pieces of {corpus!r}, not {copies} complete "
            f"copies of {per_copy} (a run stopped mid-copy, or the dev corpus changed)",
            hint="delete the --keep folder and run again",
        )
    return int(copies)


def _create_nodes(graph, label: str, rows: list[dict[str, Any]]) -> None:
    graph.write_raw(  # label: our constant, never user input
        f"UNWIND $rows AS r CREATE (n:{label}) SET n = r.props "
        "WITH n, r CALL (n, r) { WITH n, r WHERE r.emb IS NOT NULL "
        "CALL db.create.setNodeVectorProperty(n, 'embedding', r.emb) }",
        rows=rows,
    )


def _create_edges(graph, rel: str, la: str, lb: str, rows: list[dict[str, Any]]) -> None:
    graph.write_raw(  # labels and type: our constants
        f"UNWIND $rows AS r MATCH (a:{la} {{id: r.a}}) MATCH (b:{lb} {{id: r.b}}) "
        f"CREATE (a)-[e:{rel}]->(b) SET e.score = r.s",
        rows=rows,
    )


def _round_ratios(per_round: list[dict[str, list[float]]], name: str) -> list[float]:
    """``name``'s p50 over the plain vector query's p50, round by round (timed rounds only)."""
    out = []
    for timed in per_round:
        base = _pct(timed["vector_query"], 0.5)
        if base:
            out.append(round(_pct(timed[name], 0.5) / base, 2))
    return out


def _pct(values: list[float], q: float) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, max(0, int(round(q * (len(v) - 1)))))]


def run_bench(
    corpus: str,
    sizes: list[int],
    n_queries: int,
    strategies: list[str],
    echo: Callable[[str], None] = print,
    profile: bool = False,
    heap: str = "2g",
    pagecache: str = "1g",
    keep: Path | None = None,
    rounds: int = 1,
    questions: Path | None = None,
    server: LocalNeo4j | None = None,
) -> dict[str, Any]:
    """Time ``strategies`` against the plain vector query on copies of ``corpus`` grown to each
    of ``sizes`` pieces, on a Neo4j of the bench's own (``heap``/``pagecache``; ephemeral, or
    kept in ``keep`` so that the next run reuses its copies). ``server``: a running local server
    to measure on instead (the caller's, neither started nor stopped here; its copies are
    reused the same way), as the lab's tests pass the suite's spare server."""
    from kg_platform._process import free_port
    from kg_platform_lab.qa_file import read_qa_rows
    from kg_platform.embedding import get_embedder
    from kg_platform.graph import GraphClient
    from kg_platform.graph.schema import apply_migrations
    from kg_platform.neo4j_server import LocalNeo4j
    from kg_platform.retrieval.base import RetrievalContext, get_strategy

    settings = get_settings()
    data = _read_corpus(settings, corpus)
    per_copy = len(data["nodes"]["Piece"])
    echo(f"corpus {corpus}: {per_copy} pieces, {len(data['nodes']['Chunk'])} chunks per copy")
    rng = random.Random(7)
    if questions is not None:  # real questions: what the MoG/MoGG routers were trained on
        queries = [str(row["question"]) for _, row in read_qa_rows(questions, limit=n_queries)]
    else:
        pieces = data["nodes"]["Piece"]
        queries = [p["text"] for p in rng.sample(pieces, min(n_queries, per_copy))]
    embedder = _CachedEmbedder(get_embedder(settings.embedding), queries)
    qvecs = [[float(x) for x in embedder.embed([q])[0]] for q in queries]
    own_server = server is None
    if server is None:
        server_settings = Settings(neo4j={"heap": heap, "pagecache": pagecache})
        if keep is None:
            server = LocalNeo4j(server_settings, ephemeral=True)
        else:
            server = LocalNeo4j(
                server_settings, home=keep, bolt_port=free_port(), http_port=free_port()
            )
        server.start()
    report: dict[str, Any] = {
        "corpus": corpus,
        "pieces_per_copy": per_copy,
        "rounds": rounds,
        "queries": str(questions) if questions else "piece texts",
        "sizes": [],
    }
    try:
        bench_settings = Settings(
            neo4j={"uri": server.bolt_uri(), "password": server.password()},
            data_dir=settings.data_dir,
        )
        with GraphClient.from_settings(bench_settings) as graph:
            apply_migrations(graph, embedder.dimension, embedder.model_name)
            graph.write_raw("MERGE (:Corpus {name: $c})", c=corpus)
            copies = _complete_copies(graph, corpus, per_copy)
            if copies:
                echo(f"reusing {copies} copies kept in {keep}")
            for target in sorted(sizes):
                t0 = time.time()
                need = -(-target // per_copy)
                if need > copies:
                    _copy(graph, data, range(copies, need), corpus)
                    copies = need
                    graph.write_raw(
                        "MERGE (r:BenchReplica {corpus: $c}) SET r.copies = $n, r.per_copy = $p",
                        c=corpus,
                        n=copies,
                        p=per_copy,
                    )
                # the copies are written by hand: give them the corpus's own labels and indexes
                label_corpus_nodes(graph, corpus, corpus_prefix(corpus))
                ensure_corpus_indexes(graph, corpus, backfill=False)
                graph.write_raw("CALL db.awaitIndexes(3600)")
                pieces = graph.read_raw("MATCH (p:Piece) RETURN count(p) AS n")[0]["n"]
                echo(f"size {pieces} pieces ({copies} copies) built in {time.time() - t0:.0f}s")
                if need < copies:
                    echo(
                        f"  (the kept server holds more than {target} pieces: measured at {pieces})"
                    )
                ctx = RetrievalContext(
                    graph=graph, embedder=embedder, settings=bench_settings, corpus=corpus
                )
                row: dict[str, Any] = {"pieces": pieces}
                ix = ctx.index_prefix()
                graph.read_raw(_VECTOR_QUERY, qv=qvecs[0], ix=ix)
                runners: dict[str, Callable[[int], Any]] = {
                    "vector_query": lambda i, ix=ix: graph.read_raw(
                        _VECTOR_QUERY, qv=qvecs[i], ix=ix
                    )
                }
                profiles: dict[str, Any] = {}
                for name in strategies:
                    strat = get_strategy(name, ctx)
                    strat.retrieve(queries[0], 5)  # warm-up (plan cache, corpus share)
                    if profile:  # the first query once more under PROFILE, before timing
                        recorder = RecordingGraph(graph)
                        get_strategy(name, replace(ctx, graph=recorder)).retrieve(queries[0], 5)
                        profiles[name] = profile_calls(graph, recorder.calls)
                    runners[name] = lambda i, strat=strat: strat.retrieve(queries[i], 5)
                # round robin: every query runs through the baseline and each strategy in turn,
                # so a drift of the machine or of Neo4j's caches weighs on all of them alike
                # with several rounds the first only warms the caches (a kept server starts cold)
                timings: dict[str, list[float]] = {name: [] for name in runners}
                # each timed round's own ratio too: their spread is the run's noise, and a target
                # met only at one end of it is not met
                per_round: list[dict[str, list[float]]] = []
                for round_no in range(max(rounds, 1)):
                    this_round: dict[str, list[float]] = {name: [] for name in runners}
                    for i in range(len(queries)):
                        for name, run in runners.items():
                            t = time.perf_counter()
                            run(i)
                            this_round[name].append((time.perf_counter() - t) * 1000)
                    if round_no > 0 or rounds <= 1:
                        per_round.append(this_round)
                        for name, vals in this_round.items():
                            timings[name].extend(vals)
                base = statistics.median(timings["vector_query"])
                for name, vals in timings.items():
                    row[name] = {
                        "p50_ms": round(_pct(vals, 0.5), 2),
                        "p95_ms": round(_pct(vals, 0.95), 2),
                        "x_vector_p50": round(_pct(vals, 0.5) / base, 2) if base else None,
                        "x_vector_p50_rounds": _round_ratios(per_round, name),
                    }
                for name, prof in profiles.items():
                    row[name]["profile"] = prof.to_dict()
                report["sizes"].append(row)
                echo(
                    f"  {'strategy':<14}{'p50 ms':>10}{'p95 ms':>10}{'x vector':>10}"
                    f"{'per round':>16}"
                )
                for name in timings:
                    r = row[name]
                    spread = r["x_vector_p50_rounds"]
                    span = f"{min(spread)}-{max(spread)}" if spread else "-"
                    echo(
                        f"  {name:<14}{r['p50_ms']:>10}{r['p95_ms']:>10}{r['x_vector_p50']:>10}"
                        f"{span:>16}"
                    )
                for name, prof in profiles.items():
                    top = ", ".join(f"{op} {hits}" for op, hits in prof.top())
                    echo(f"  PROFILE {name}: {prof.db_hits} db hits, {prof.rows} rows; top: {top}")
    finally:
        if own_server:
            server.stop()
    return report
