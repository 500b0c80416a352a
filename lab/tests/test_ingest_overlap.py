"""Overlapped ingestion (embed and write in worker threads, ``ingest.pipeline_batches``) stores
the same graph as the serial pipeline, and a failed write stops every later batch."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kg_platform.errors import GraphError
from kg_platform.ingest.steps import write as write_step
from kg_platform_lab.qa_ingest import ingest_qa
from kg_platform.ingest.writer import drop_corpus
from tests.support.data import DEV

pytestmark = pytest.mark.integration

QA = DEV / "hotpotqa.jsonl"
needs_data = pytest.mark.skipif(not QA.exists(), reason="needs the shared bench data")


def _with_ingest(settings, *, pipeline_batches: int | None = None, **changes):
    """``changes`` to the ingest settings; ``pipeline_batches`` is ingestion tuning."""
    out = settings.model_copy(update={"ingest": settings.ingest.model_copy(update=changes)})
    if pipeline_batches is not None:
        out = out.with_tuning(ingest={"pipeline_batches": pipeline_batches})
    return out


def _shape(graph, corpus: str) -> tuple[list[tuple], dict[tuple, list[float]]]:
    """Everything but the corpus-derived ids: per chunk (source, level, ord) its text and its
    pieces' texts in order, the SIMILAR edge scores, and the chunk vectors."""
    rows = graph.read_raw(
        "MATCH (s:Source {corpus: $c})-[:HAS_SECTION*1..]->(:Section)-[:HAS_CHUNK]->(ch:Chunk) "
        "OPTIONAL MATCH (p:Piece)-[:IN]->(ch) "
        "WITH s, ch, p ORDER BY p.doc_ord "
        "RETURN s.uri AS uri, ch.level AS level, ch.ord AS ord, ch.text AS text, "
        "collect(p.text) AS pieces, ch.embedding AS vector",
        c=corpus,
    )
    edges = graph.read_raw(
        "MATCH (a:Piece {corpus: $c})-[r:SIMILAR]->(b:Piece) "
        "RETURN a.text AS a, b.text AS b, round(r.score, 6) AS s",
        c=corpus,
    )
    chunks = sorted(
        (r["uri"].split("/")[-1], r["level"], r["ord"], r["text"], tuple(r["pieces"])) for r in rows
    )
    vectors = {(r["uri"].split("/")[-1], r["level"], r["ord"]): r["vector"] for r in rows}
    # edges by score only: equal scores are broken by piece id, and ids differ across corpora
    return chunks + sorted(e["s"] for e in edges), vectors


@needs_data
def test_overlapped_batches_store_the_same_graph_as_the_serial_pipeline(
    graph_session, settings, embedder
) -> None:
    serial, overlapped = "t-overlap-serial", "t-overlap-threads"
    for name in (serial, overlapped):
        drop_corpus(graph_session, name)
    # ~60 nodes per transaction: the 3 questions' paragraphs become many batches in flight
    small = _with_ingest(settings, transaction_rows=60)
    a = ingest_qa(
        graph_session,
        _with_ingest(small, pipeline_batches=0),
        QA,
        serial,
        limit=3,
        embedder=embedder,
    )
    b = ingest_qa(
        graph_session,
        _with_ingest(small, pipeline_batches=2),
        QA,
        overlapped,
        limit=3,
        embedder=embedder,
    )
    assert a.status == b.status == "completed"
    assert len(b.added) == len(a.added) > 5
    assert sorted(Path(u).name for u in b.added) == sorted(Path(u).name for u in a.added)
    assert b.counts == a.counts and b.texts_embedded == a.texts_embedded
    (shape_b, vectors_b), (shape_a, vectors_a) = (
        _shape(graph_session, overlapped),
        _shape(graph_session, serial),
    )
    assert shape_b == shape_a
    assert vectors_b.keys() == vectors_a.keys()
    for key, vector in vectors_a.items():
        assert np.allclose(vectors_b[key], vector, atol=1e-5), key


@needs_data
def test_a_failed_write_stops_later_batches_and_the_report_matches_the_graph(
    graph_session, settings, embedder, monkeypatch
) -> None:
    corpus = "t-overlap-fail"
    drop_corpus(graph_session, corpus)
    real_write = write_step.write_plans
    calls: list[int] = []

    def write_then_fail(graph, plans, run_id):
        calls.append(len(plans))
        if len(calls) == 2:
            raise GraphError("injected: the second batch's transaction failed")
        real_write(graph, plans, run_id)

    monkeypatch.setattr(write_step, "write_plans", write_then_fail)
    cfg = _with_ingest(settings, transaction_rows=60, pipeline_batches=2)
    report = ingest_qa(graph_session, cfg, QA, corpus, limit=3, embedder=embedder)
    assert report.status == "failed" and "injected" in (report.fatal or "")
    assert len(calls) == 2  # nothing was written after the failure
    stored = {
        r["uri"]
        for r in graph_session.read_raw(
            "MATCH (s:Source {corpus: $c}) RETURN s.uri AS uri", c=corpus
        )
    }
    assert stored == set(report.added) and len(stored) == calls[0]

    monkeypatch.setattr(write_step, "write_plans", real_write)
    resumed = ingest_qa(graph_session, cfg, QA, corpus, limit=3, embedder=embedder)
    assert resumed.status == "completed"
    assert set(resumed.skipped) == stored and not (set(resumed.added) & stored)


class _Int8Label:
    """The test embedder under another quantisation label (same vectors: only the signature
    path is under test, building the int8 model is not needed for that)."""

    def __init__(self, inner) -> None:
        self._inner = inner
        self.model_name, self.dimension, self.quantize = inner.model_name, inner.dimension, "int8"

    def embed(self, texts):
        return self._inner.embed(texts)


@needs_data
def test_switching_quantisation_re_embeds_unchanged_sources(
    graph_session, settings, embedder
) -> None:
    corpus = "t-overlap-quantize"
    drop_corpus(graph_session, corpus)
    first = ingest_qa(graph_session, settings, QA, corpus, limit=1, embedder=embedder)
    same = ingest_qa(graph_session, settings, QA, corpus, limit=1, embedder=embedder)
    assert first.added and len(same.skipped) == len(first.added)
    switched = ingest_qa(
        graph_session, settings, QA, corpus, limit=1, embedder=_Int8Label(embedder)
    )
    assert sorted(switched.replaced) == sorted(first.added) and not switched.skipped
