"""``kgp lab bench ingest-growth`` on a real Neo4j at toy sizes: one row per size with the added
source's time next to the embed-only time of its texts, and nothing left behind."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from kg_platform_lab.bench.ingest_growth import run_growth_bench

pytestmark = pytest.mark.integration


def test_growth_bench_reports_every_size_and_cleans_up(graph_session, settings):
    result = run_growth_bench(settings, sizes=[40, 120], add=1, seed_questions=2)
    rows = result["sizes"]
    assert len(rows) == 2
    assert 40 <= rows[0]["pieces"] < rows[1]["pieces"] and rows[1]["pieces"] >= 120
    for row in rows:
        assert row["per_source_s"] > 0 and row["embed_only_s"] > 0
        assert row["sync_modes"] == ["incremental"]  # the replicas are a frozen, synced state
        assert row["full_build_s"] is not None
        assert abs(row["ratio_vs_embed"] - row["per_source_s"] / row["embed_only_s"]) < 0.2
    assert rows[0]["ratio_vs_smallest"] == 1.0
    left = graph_session.read_raw(
        "MATCH (n) WHERE n.corpus STARTS WITH 'bench-growth' OR n.name STARTS WITH "
        "'bench-growth' RETURN count(n) AS n"
    )[0]["n"]
    assert left == 0


@contextmanager
def _seed_and_replicas(
    graph, settings, embedder, seed: str, corpus: str
) -> Iterator[dict[str, Any]]:
    """A two-question seed corpus read as the retrieval bench reads it; on exit the seed, the
    ``corpus`` replicas and their (:BenchReplica) record are removed."""
    from kg_platform_lab.qa_ingest import ingest_qa
    from kg_platform.ingest.writer import drop_corpus
    from kg_platform_lab.bench.ingest import default_qa_file
    from kg_platform_lab.bench.ingest_growth import _drop_replicas
    from kg_platform_lab.bench.retrieval import _read_corpus

    drop_corpus(graph, seed)
    _drop_replicas(graph, corpus)
    ingest_qa(graph, settings, default_qa_file(), seed, limit=2, embedder=embedder)
    try:
        yield _read_corpus(settings, seed)
    finally:
        graph.write_raw("MATCH (r:BenchReplica {corpus: $c}) DELETE r", c=corpus)
        _drop_replicas(graph, corpus)
        drop_corpus(graph, seed)


def test_replicas_choose_inside_their_own_copy(graph_session, settings, embedder):
    """The replicas' stored choices name pieces of the same copy, and every replica piece has
    the replica corpus' key (the incremental sync's fulltext candidates require it)."""
    from kg_platform.corpus_name import corpus_key
    from kg_platform_lab.bench.ingest_growth import _freeze_replicas
    from kg_platform_lab.bench.retrieval import _copy

    seed, corpus = "t-growth-seed", "t-growth-replicas"
    with _seed_and_replicas(graph_session, settings, embedder, seed, corpus) as data:
        assert any(p.get("sim_choices") for p in data["nodes"]["Piece"])
        _copy(graph_session, data, range(0, 3), corpus)
        _freeze_replicas(graph_session, seed, corpus, range(0, 3), 3, data["nodes"]["Piece"])
        rows = graph_session.read_raw(
            "MATCH (p:Piece {corpus: $c}) RETURN p.id AS id, p.sim_choices AS choices, "
            "p.corpus_key AS key",
            c=corpus,
        )
        assert len(rows) == 3 * len(data["nodes"]["Piece"])
        ids = {r["id"] for r in rows}
        for r in rows:
            suffix = r["id"][r["id"].rindex("~") :]
            assert r["key"] == corpus_key(corpus)
            assert all(c.endswith(suffix) and c in ids for c in r["choices"] or [])


def test_a_kept_retrieval_bench_server_reuses_only_complete_copies(
    graph_session, settings, embedder
):
    """`kgp lab bench retrieve --keep DIR`: the copies a kept server records are reused; a piece
    count that disagrees with the record (a run killed mid-copy) is refused, never measured."""
    from kg_platform.errors import RetrievalError
    from kg_platform_lab.bench.retrieval import _complete_copies, _copy

    corpus = "t-keep-replicas"
    with _seed_and_replicas(graph_session, settings, embedder, "t-keep-seed", corpus) as data:
        per_copy = len(data["nodes"]["Piece"])
        assert _complete_copies(graph_session, corpus, per_copy) == 0  # a new server
        _copy(graph_session, data, range(0, 2), corpus)
        with pytest.raises(RetrievalError, match="not 0 complete copies"):
            _complete_copies(graph_session, corpus, per_copy)  # copied, never recorded
        graph_session.write_raw(
            "MERGE (r:BenchReplica {corpus: $c}) SET r.copies = 2, r.per_copy = $p",
            c=corpus,
            p=per_copy,
        )
        assert _complete_copies(graph_session, corpus, per_copy) == 2
        with pytest.raises(RetrievalError, match="delete the --keep folder"):
            _complete_copies(graph_session, corpus, per_copy + 1)  # the dev corpus changed
