"""Shared helpers of the fault suite: run ``kgp`` as a real subprocess against the suite's Neo4j,
and describe a corpus so two ingests can be compared source by source."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

KGP = Path(sys.executable).with_name("kgp")


def soak() -> bool:
    """``KGP_SOAK=1`` runs the long versions (more kill points, more rounds)."""
    return os.environ.get("KGP_SOAK", "") not in ("", "0")


def kgp_env(settings: Any, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        NEO4J_URI=settings.neo4j.uri,
        NEO4J_PASSWORD=settings.neo4j.password.get_secret_value(),
        KGP_DATA_DIR=str(settings.data_dir),
        HF_HUB_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
        KGP_DISTILL__NLP_ON_INGEST="false",  # as the ``settings`` fixture; a test may ask for it
    )
    env.pop("KGP_FAULT_KILL", None)
    env.update(extra)
    return env


def run_kgp(
    args: list[str], env: dict[str, str], timeout: float = 600
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(KGP), *args], env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def corpus_shape(graph: Any, corpus: str) -> dict[str, tuple[int, int, int, int]]:
    """Per source file name: (sections, chunks, pieces, characters of chunk text)."""
    rows = graph.read_raw(
        "MATCH (s:Source {corpus: $corpus}) "
        "OPTIONAL MATCH (s)-[:HAS_SECTION*1..]->(sec:Section) "
        "WITH s, collect(DISTINCT sec) AS secs "
        "OPTIONAL MATCH (s)-[:HAS_SECTION*1..]->(:Section)-[:HAS_CHUNK]->(c:Chunk) "
        "WITH s, secs, collect(DISTINCT c) AS chunks "
        "OPTIONAL MATCH (p:Piece)-[:IN]->(c2:Chunk) WHERE c2 IN chunks "
        "RETURN s.uri AS uri, size(secs) AS sections, size(chunks) AS chunks, "
        "count(DISTINCT p) AS pieces, "
        "reduce(n = 0, c IN chunks | n + size(c.text)) AS chars",
        corpus=corpus,
    )
    return {
        Path(r["uri"]).name: (r["sections"], r["chunks"], r["pieces"], r["chars"]) for r in rows
    }


def duplicate_sources(graph: Any, corpus: str) -> list[str]:
    rows = graph.read_raw(
        "MATCH (s:Source {corpus: $corpus}) WITH s.uri AS uri, count(*) AS n "
        "WHERE n > 1 RETURN uri",
        corpus=corpus,
    )
    return [r["uri"] for r in rows]


def orphans(graph: Any, corpus: str | None = None) -> dict[str, int]:
    """Sections no Source reaches, chunks in no section, pieces in no chunk: of one corpus, or
    of the whole database when ``corpus`` is None (only safe on a server no other test module
    writes hand-built nodes to: under pytest-xdist a worker's server is shared by its modules)."""
    rows = graph.read_raw(
        "CALL () { MATCH (x:Section) WHERE ($corpus IS NULL OR x.corpus = $corpus) "
        "AND NOT EXISTS { (:Source)-[:HAS_SECTION*1..]->(x) } "
        "RETURN count(x) AS sections } "
        "CALL () { MATCH (x:Chunk) WHERE ($corpus IS NULL OR x.corpus = $corpus) "
        "AND NOT EXISTS { (:Section)-[:HAS_CHUNK]->(x) } "
        "RETURN count(x) AS chunks } "
        "CALL () { MATCH (x:Piece) WHERE ($corpus IS NULL OR x.corpus = $corpus) "
        "AND NOT EXISTS { (x)-[:IN]->(:Chunk) } "
        "RETURN count(x) AS pieces } "
        "RETURN sections, chunks, pieces",
        corpus=corpus,
    )
    return {k: v for k, v in dict(rows[0]).items() if v}


def stored_and_rebuilt_edges(
    graph: Any, settings: Any, corpus: str
) -> tuple[dict[tuple[str, str], float], dict[tuple[str, str], float]]:
    """The corpus's SIMILAR edges (piece id pairs with scores) as stored, then as a full build
    over its current pieces with its frozen BM25 statistics gives them (computed in Python, from
    the pieces' texts alone).

    That build is the reference a stored graph must equal, whatever mix of full and incremental
    syncs, crashes and concurrent runs produced it (ties are broken by content, so a second corpus
    of the same files has the same edges between pieces of the same texts, though other ids)."""
    from kg_platform.ingest.similar import desired_edges, frozen_stats

    rows = graph.read_raw(
        "MATCH (a:Piece {corpus: $c})-[r:SIMILAR]->(b:Piece) "
        "RETURN a.id AS a, b.id AS b, r.score AS s",
        c=corpus,
    )
    stored = {(r["a"], r["b"]): r["s"] for r in rows}
    stats = frozen_stats(graph, corpus)
    assert stats is not None, "a synced corpus has frozen piece-graph statistics"
    pieces = graph.read("ingest/piece_texts", corpus=corpus)
    pg = settings.tuning.piece_graph
    return stored, desired_edges(pieces, pg.k_graph, pg.t_graph, stats)


def assert_same_edges(
    stored: dict[tuple[str, str], float], rebuilt: dict[tuple[str, str], float]
) -> None:
    assert rebuilt, "the rebuild made no SIMILAR edges: the comparison would prove nothing"
    missing, extra = set(rebuilt) - set(stored), set(stored) - set(rebuilt)
    assert not missing and not extra, f"{len(missing)} edges missing, {len(extra)} extra"
    worst = max(abs(stored[k] - rebuilt[k]) for k in rebuilt)
    assert worst < 1e-6, worst
