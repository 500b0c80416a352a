"""``ingest.engine = "ray"`` on a real local Ray cluster (two CPUs on 127.0.0.1): the graph equals
the in-process ingestion of the same files, a corrupt file and a worker that dies are reported
while the rest lands, the next run resumes, and ``kgp ingest --engine ray`` goes through the SDK."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from kg_platform.ingest import ingest_paths
from kg_platform.ingest.writer import drop_corpus
from tests.support.data import DOCUMENTS

ray = pytest.importorskip("ray", reason="the ray extra is not installed")

pytestmark = [pytest.mark.integration, pytest.mark.slow]

DOCS = DOCUMENTS


@pytest.fixture(scope="module")
def ray_local() -> Iterator[None]:
    """A local Ray cluster with two worker CPUs, shared by the tests of this module; the engine
    uses a Ray already initialised in the process as it is."""
    started = not ray.is_initialized()
    if started:
        ray.init(
            num_cpus=2,
            include_dashboard=False,
            log_to_driver=False,
            _node_ip_address="127.0.0.1",  # loopback only: nothing leaves this machine
        )
    yield
    if started:
        ray.shutdown()


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    """Markdown, HTML and DOCX documents plus one corrupt PDF."""
    for rel in (
        "md/markitdown-README.md",
        "md/pdfplumber-README.md",
        "html/autogen-blog.html",
        "docx/docling-word_tables.docx",
        "docx/markitdown-test.docx",
    ):
        shutil.copy(DOCS / rel, tmp_path / Path(rel).name)
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.7\n this is not a pdf at all")
    return tmp_path


def _with_ingest(settings, **changes):
    return settings.model_copy(update={"ingest": settings.ingest.model_copy(update=changes)})


# written by the run, not derived from the input: they differ between any two runs
RUN_KEYS = {"run_id", "ingested_at", "updated_at", "created_at", "last_run", "build", "built_at"}


def _snapshot(graph, corpus: str) -> tuple[dict, dict, dict]:
    """Every node of the corpus by (labels, id) with its properties (vectors apart), every
    vector, and every relationship between them with its properties."""
    nodes = graph.read_raw(
        "MATCH (n {corpus: $c}) WHERE NOT n:IngestRun AND NOT n:JobLock "
        "RETURN elementId(n) AS eid, labels(n) AS labels, properties(n) AS props",
        c=corpus,
    )
    key_of = {
        r["eid"]: (
            tuple(sorted(set(r["labels"]) - {"SimPending"})),
            r["props"].get("id") or r["props"].get("term"),  # PieceTerm: one per term
        )
        for r in nodes
    }
    props, vectors = {}, {}
    for r in nodes:
        key = key_of[r["eid"]]
        p = {k: v for k, v in r["props"].items() if k not in RUN_KEYS}
        for name in [k for k, v in p.items() if k.endswith("embedding")]:
            vectors[(key, name)] = p.pop(name)
        props[key] = p
    rels = graph.read_raw(
        "MATCH (a {corpus: $c})-[r]->(b) WHERE NOT a:IngestRun AND NOT b:IngestRun "
        "RETURN labels(a) AS al, a.id AS aid, type(r) AS type, labels(b) AS bl, "
        "coalesce(b.id, b.term, b.name) AS bid, properties(r) AS props",
        c=corpus,
    )

    def rel_props(raw: dict) -> tuple:
        kept = {k: v for k, v in raw.items() if k not in RUN_KEYS and not isinstance(v, float)}
        return tuple(sorted(kept.items()))

    def rel_floats(raw: dict) -> tuple:
        return tuple(sorted((k, v) for k, v in raw.items() if isinstance(v, float)))

    def node(labels: list[str], ident: str) -> tuple:
        return tuple(sorted(set(labels) - {"SimPending"})), ident

    # float properties (SIMILAR scores) are compared within 1e-6, not rounded: a full rebuild
    # sums BM25 in another order than the first ingestion did, and rounding to a fixed number
    # of decimals turns a last-bit difference at a rounding boundary into a different value
    edges = {
        (node(r["al"], r["aid"]), r["type"], node(r["bl"], r["bid"]), rel_props(r["props"])): (
            rel_floats(r["props"])
        )
        for r in rels
    }
    return props, vectors, edges


def _assert_same_graph(a: tuple[dict, dict, dict], b: tuple[dict, dict, dict]) -> None:
    props_a, vectors_a, edges_a = a
    props_b, vectors_b, edges_b = b
    assert len(props_a) > 50 and len(edges_a) > 100
    assert props_a.keys() == props_b.keys()
    for key, p in props_a.items():
        assert p == props_b[key], key
    assert edges_a.keys() == edges_b.keys()
    for key, floats in edges_a.items():
        other = edges_b[key]
        assert [k for k, _ in floats] == [k for k, _ in other], key
        assert np.allclose([v for _, v in floats], [v for _, v in other], rtol=0, atol=1e-6), key
    assert vectors_a.keys() == vectors_b.keys()
    for key, vec in vectors_a.items():
        assert np.allclose(vec, vectors_b[key], atol=1e-5), key


def test_ray_ingestion_stores_the_graph_of_in_process_ingestion(
    ray_local, graph_session, settings, embedder, folder
) -> None:
    corpus = "t-ray-same"
    drop_corpus(graph_session, corpus)
    a = ingest_paths(graph_session, settings, [folder], corpus, embedder=embedder)
    local = _snapshot(graph_session, corpus)
    drop_corpus(graph_session, corpus)
    b = ingest_paths(
        graph_session,
        _with_ingest(settings, engine="ray", transaction_rows=200),
        [folder],
        corpus,
        embedder=embedder,
    )
    assert a.status == b.status == "completed_with_errors"
    assert sorted(a.added) == sorted(b.added) and len(b.added) == 5
    assert [e.path for e in b.errors] == [str(folder / "broken.pdf")]
    assert b.errors[0].error == a.errors[0].error == "CorruptDocument"
    assert b.counts == a.counts and b.counts["pieces"] > 0
    # a worker deduplicates texts within its source, in-process within a write batch
    assert b.texts_embedded >= a.texts_embedded > 0
    assert b.timings["embed"] > 0 and b.timings["parse"] > 0
    _assert_same_graph(local, _snapshot(graph_session, corpus))

    again = ingest_paths(
        graph_session, _with_ingest(settings, engine="ray"), [folder], corpus, embedder=embedder
    )
    assert len(again.skipped) == 5 and not again.added  # skip-by-hash happens before Ray


def test_a_dead_worker_costs_its_source_only_and_the_next_run_resumes(
    ray_local, graph_session, settings, embedder, folder, monkeypatch
) -> None:
    corpus = "t-ray-dies"
    drop_corpus(graph_session, corpus)
    (folder / "broken.pdf").unlink()
    ingest_paths(graph_session, settings, [folder], corpus, embedder=embedder)
    reference = _snapshot(graph_session, corpus)
    drop_corpus(graph_session, corpus)
    one_worker = _with_ingest(settings, engine="ray", ray_workers=1)

    # the worker process is SIGKILLed at its 2nd parse; restarted, it dies at its 2nd again
    monkeypatch.setenv("KGP_FAULT_KILL", "parse:2")
    hit = ingest_paths(graph_session, one_worker, [folder], corpus, embedder=embedder)
    monkeypatch.delenv("KGP_FAULT_KILL")
    files = sorted(str(p) for p in folder.iterdir())
    assert hit.status == "completed_with_errors"
    assert sorted(e.path for e in hit.errors) == files[1::2], [e.reason for e in hit.errors]
    assert {e.error for e in hit.errors} == {"WorkerDied"}
    assert sorted(hit.added) == files[0::2]

    resumed = ingest_paths(graph_session, one_worker, [folder], corpus, embedder=embedder)
    assert resumed.status == "completed"
    assert sorted(resumed.added) == files[1::2]
    assert sorted(resumed.skipped) == files[0::2]
    # the piece graph was updated incrementally after the first run; compare with a full build
    kp_sync = _rebuild(graph_session, settings, corpus)
    assert kp_sync.mode == "full"
    _assert_same_graph(reference, _snapshot(graph_session, corpus))


def _rebuild(graph, settings, corpus: str):
    from kg_platform.ingest.similar import sync_piece_graph

    pg = settings.tuning.piece_graph
    return sync_piece_graph(graph, corpus, pg.k_graph, pg.t_graph, force=True)


def test_kgp_ingest_engine_ray_cli(ray_local, cli_env, folder) -> None:
    from typer.testing import CliRunner

    from kg_platform.cli.main import app

    drop_corpus(cli_env, "t-ray-cli")
    res = CliRunner().invoke(
        app,
        ["ingest", str(folder), "--corpus", "t-ray-cli", "--engine", "ray", "--workers", "2"]
        + ["--json"],
    )
    bad = CliRunner().invoke(app, ["ingest", str(folder), "--engine", "spark"])
    assert res.exit_code == 1, res.output  # the corrupt PDF
    events = [json.loads(line) for line in res.output.splitlines() if line.startswith("{")]
    assert any(e.get("name") == "ingesting on 2 Ray workers" for e in events)
    report = events[-1]
    assert report["event"] == "report" and len(report["added"]) == 5
    assert bad.exit_code == 2 and "use local or ray" in bad.output


def test_ray_and_in_process_give_the_same_counts_under_other_names_and_folders(
    ray_local, graph_session, settings, embedder, folder, tmp_path_factory
) -> None:
    """The engine, the corpus name and the folder change nothing in the graph's shape, SIMILAR
    included (its ties are broken by content, not by the ids these change)."""
    from tests.support.graph_counts import corpus_counts, similar_by_text

    (folder / "broken.pdf").unlink()
    elsewhere = tmp_path_factory.mktemp("ray-elsewhere") / "docs"
    shutil.copytree(folder, elsewhere)
    for corpus in ("t-ray-det-local", "t-ray-det-on-ray"):
        drop_corpus(graph_session, corpus)
    a = ingest_paths(graph_session, settings, [folder], "t-ray-det-local", embedder=embedder)
    b = ingest_paths(
        graph_session,
        _with_ingest(settings, engine="ray", transaction_rows=200),
        [elsewhere],
        "t-ray-det-on-ray",
        embedder=embedder,
    )
    assert a.status == b.status == "completed"
    local = corpus_counts(graph_session, "t-ray-det-local")
    assert local["rel:SIMILAR"] > 100
    assert local == corpus_counts(graph_session, "t-ray-det-on-ray")
    assert similar_by_text(graph_session, "t-ray-det-local") == similar_by_text(
        graph_session, "t-ray-det-on-ray"
    )
