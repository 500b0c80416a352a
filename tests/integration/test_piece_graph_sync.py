"""The SIMILAR piece graph on a real Neo4j: a sequence of incremental ingests (add one by one,
replace, remove) ends equal to a full build with the corpus' frozen BM25 statistics, and
concurrent writers cannot leave edges missing or the corpus marked clean over pieces the sync did
not see."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

import pytest

from kg_platform.ingest import ingest_paths
from kg_platform.ingest import similar
from kg_platform.ingest.similar import desired_edges, frozen_stats, sync_piece_graph
from kg_platform.ingest.writer import drop_corpus
from tests.support.data import DEV, DOCUMENTS

pytestmark = pytest.mark.integration

DEV_CORPUS = DEV / "corpus"
HALF_A_DOCS = ["md/docling-wiki-ibm.md", "md/pdfplumber-README.md"]


def _write_sources(folder: Path, n_files: int, per_file: int, skip: int = 0) -> list[Path]:
    """Markdown files of dev-corpus paragraphs (HotpotQA, so neighbours share entities)."""
    folder.mkdir(parents=True, exist_ok=True)
    with (DEV_CORPUS / "hotpotqa.jsonl").open(encoding="utf-8") as fh:
        rows = [json.loads(line) for _, line in zip(range(skip + n_files * per_file), fh)][skip:]
    paths = []
    for i in range(n_files):
        part = rows[i * per_file : (i + 1) * per_file]
        body = "\n\n".join(f"## {r['title']}\n\n{r['text']}" for r in part)
        path = folder / f"src-{skip + i:03d}.md"
        path.write_text(f"# Source {skip + i}\n\n{body}\n", encoding="utf-8")
        paths.append(path)
    return paths


def _edges(graph, corpus: str) -> dict[tuple[str, str], float]:
    rows = graph.read_raw(
        "MATCH (a:Piece {corpus: $c})-[r:SIMILAR]->(b:Piece) "
        "RETURN a.id AS a, b.id AS b, r.score AS s",
        c=corpus,
    )
    return {(r["a"], r["b"]): r["s"] for r in rows}


def _rebuilt(graph, corpus: str, settings) -> dict[tuple[str, str], float]:
    """What the sync promises: a full build over the current pieces with the corpus' frozen
    statistics (computed here in Python, independent of the stored edges and choices)."""
    pg = settings.tuning.piece_graph
    rows = graph.read("ingest/piece_texts", corpus=corpus)
    stats = frozen_stats(graph, corpus)
    assert stats is not None, "a synced corpus has frozen statistics"
    return desired_edges(rows, pg.k_graph, pg.t_graph, stats)


def _with_piece_graph(settings, **changes):
    return settings.with_tuning(piece_graph=changes)


def _state(graph, corpus: str) -> dict:
    return dict(
        graph.read_raw(
            "MATCH (co:Corpus {name: $c}) RETURN co.piece_graph_dirty AS "
            "dirty, co.piece_graph_version AS version",
            c=corpus,
        )[0]
    )


def _assert_same(got: dict, want: dict) -> None:
    assert want, "the sample must produce SIMILAR edges, or the comparison proves nothing"
    assert set(got) == set(want)
    worst = max(abs(got[k] - want[k]) for k in want)
    assert worst < 1e-6


def test_incremental_runs_equal_a_full_rebuild(graph_session, settings, embedder, tmp_path):
    graph, corpus = graph_session, "t-pg-incremental"
    drop_corpus(graph, corpus)
    settings = _with_piece_graph(settings, rebuild_factor=100.0)  # never rebuild: all incremental
    folder = tmp_path / "docs"
    files = _write_sources(folder, n_files=5, per_file=4)
    modes = []
    for i in range(1, len(files) + 1):  # add sources one by one
        report = ingest_paths(graph, settings, files[:i], corpus, embedder=embedder)
        assert report.status == "completed", report.summary()
        modes.append(report.piece_graph_mode)
    assert modes == ["full"] + ["incremental"] * 4
    added_only = _edges(graph, corpus)
    _assert_same(added_only, _rebuilt(graph, corpus, settings))
    files[2].write_text(
        files[2].read_text(encoding="utf-8") + "\n\n## Replaced\n\n"
        "Hardy Diagnostics replaced this paragraph about culture media.\n",
        encoding="utf-8",
    )
    report = ingest_paths(graph, settings, [folder], corpus, embedder=embedder)
    assert report.replaced == [str(files[2])]
    files[4].unlink()
    report = ingest_paths(graph, settings, [folder], corpus, prune=True, embedder=embedder)
    assert report.pruned == [str(files[4])]
    assert report.piece_graph_mode == "incremental"
    incremental = _edges(graph, corpus)
    count = graph.read_raw(
        "MATCH (co:Corpus {name: $c}) RETURN co.piece_graph_edges AS n", c=corpus
    )
    assert count[0]["n"] == len(incremental)  # the edge count kept up through replace and prune
    assert incremental != added_only  # the replace and the prune changed the graph
    assert _state(graph, corpus)["dirty"] is False
    _assert_same(incremental, _rebuilt(graph, corpus, settings))
    drop_corpus(graph, corpus)


def test_a_write_inside_the_sync_window_is_not_lost(
    graph_session, settings, embedder, tmp_path, monkeypatch
):
    """Writer B lands while writer A is computing the graph from its snapshot (issue F1)."""
    graph, corpus = graph_session, "t-pg-window"
    drop_corpus(graph, corpus)
    first = _write_sources(tmp_path / "a", n_files=2, per_file=4)
    second = _write_sources(tmp_path / "b", n_files=2, per_file=4, skip=8)
    real = similar._full_graph
    landed: list[bool] = []

    def compute_then_let_b_in(*args, **kwargs):
        edges = real(*args, **kwargs)
        if not landed:
            landed.append(True)
            report = ingest_paths(graph, settings, second, corpus, embedder=embedder)
            assert report.status == "completed", report.summary()
        return edges

    monkeypatch.setattr(similar, "_full_graph", compute_then_let_b_in)
    report = ingest_paths(graph, settings, first, corpus, embedder=embedder)
    assert report.status == "completed" and landed
    monkeypatch.setattr(similar, "_full_graph", real)
    sources = graph.read_raw(
        "MATCH (:Corpus {name: $c})-[:HAS_SOURCE]->(s) RETURN count(s) AS n", c=corpus
    )[0]["n"]
    assert sources == 4
    assert _state(graph, corpus)["dirty"] is False
    _assert_same(_edges(graph, corpus), _rebuilt(graph, corpus, settings))
    drop_corpus(graph, corpus)


def test_a_stale_snapshot_is_not_applied(graph_session, settings, embedder, tmp_path, monkeypatch):
    """The apply refuses a snapshot older than the corpus version and retries from a new one."""
    graph, corpus = graph_session, "t-pg-stale"
    drop_corpus(graph, corpus)
    files = _write_sources(tmp_path / "docs", n_files=3, per_file=3, skip=20)
    ingest_paths(graph, settings, files[:2], corpus, embedder=embedder)
    bumps = {"n": 0}
    real_read = graph.read

    def read_then_bump(name, **params):
        rows = real_read(name, **params)
        if name == "ingest/piece_texts" and bumps["n"] == 0:
            bumps["n"] += 1  # a writer commits between the snapshot and the apply
            graph.write("ingest/mark_corpus_dirty", corpus=corpus)
        return rows

    monkeypatch.setattr(graph, "read", read_then_bump)
    pg = settings.tuning.piece_graph
    result = sync_piece_graph(graph, corpus, pg.k_graph, pg.t_graph, force=True)
    monkeypatch.undo()
    assert result.conflicts == 1 and not result.stale and not result.skipped
    assert _state(graph, corpus)["dirty"] is False
    drop_corpus(graph, corpus)


def test_two_concurrent_ingests_end_with_the_full_edge_set(
    graph_session, settings, embedder, tmp_path
):
    graph, corpus = graph_session, "t-pg-concurrent"
    drop_corpus(graph, corpus)
    folders = [tmp_path / "a", tmp_path / "b"]
    _write_sources(folders[0], n_files=3, per_file=3, skip=40)
    _write_sources(folders[1], n_files=3, per_file=3, skip=49)
    reports: list = []
    errors: list[BaseException] = []

    def run(folder: Path) -> None:
        try:
            reports.append(ingest_paths(graph, settings, [folder], corpus, embedder=embedder))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(f,)) for f in folders]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert [r.status for r in reports] == ["completed", "completed"]
    assert _state(graph, corpus)["dirty"] is False
    _assert_same(_edges(graph, corpus), _rebuilt(graph, corpus, settings))
    drop_corpus(graph, corpus)


def test_a_write_between_apply_batches_stops_the_stale_snapshot(
    graph_session, settings, embedder, tmp_path, monkeypatch
):
    """The diff lands in batches; a writer landing after the first one stops the rest of it."""
    graph, corpus = graph_session, "t-pg-batches"
    drop_corpus(graph, corpus)
    files = _write_sources(tmp_path / "docs", n_files=3, per_file=3, skip=60)
    ingest_paths(graph, settings, files[:2], corpus, embedder=embedder)
    graph.write_raw("MATCH (:Piece {corpus: $c})-[r:SIMILAR]-() DELETE r", c=corpus)
    graph.write("ingest/mark_corpus_dirty", corpus=corpus)
    monkeypatch.setattr(graph, "batch_size", 2)  # many small apply batches
    real_tx = graph.in_transaction
    seen = {"batches": 0}

    def tx_then_write(work, **kwargs):
        out = real_tx(work, **kwargs)
        seen["batches"] += 1
        if seen["batches"] == 1:  # a source write lands mid-apply
            report = ingest_paths(graph, settings, files[2:], corpus, embedder=embedder)
            assert report.status == "completed", report.summary()
        return out

    monkeypatch.setattr(graph, "in_transaction", tx_then_write)
    pg = settings.tuning.piece_graph
    # forced: a full build is what is applied in batches (an incremental one is one transaction)
    result = sync_piece_graph(graph, corpus, pg.k_graph, pg.t_graph, force=True)
    monkeypatch.undo()
    assert seen["batches"] > 1
    # the nested ingest's sync brought the graph up to date; the stale one stopped and found
    # the corpus clean on its retry
    assert result.conflicts >= 1 and not result.stale
    assert _state(graph, corpus)["dirty"] is False
    _assert_same(_edges(graph, corpus), _rebuilt(graph, corpus, settings))
    drop_corpus(graph, corpus)


def test_check_and_rebuild_through_the_cli(cli_env, settings, embedder, tmp_path):
    """`kgp piece-graph check` finds the incremental graph equal to a frozen-statistics build
    and reports a tampered edge; `rebuild` refreezes the statistics on the current pieces."""
    from typer.testing import CliRunner

    from kg_platform.cli.main import app

    graph, corpus = cli_env, "t-pg-cli"
    drop_corpus(graph, corpus)
    small = _with_piece_graph(settings, rebuild_factor=100.0)
    files = _write_sources(tmp_path / "docs", n_files=3, per_file=4, skip=80)
    for i in (1, 3):
        report = ingest_paths(graph, small, files[:i], corpus, embedder=embedder)
        assert report.status == "completed", report.summary()
    assert report.piece_graph_mode == "incremental"
    res = CliRunner().invoke(app, ["piece-graph", "check", "--corpus", corpus, "--json"])
    assert res.exit_code == 0, res.output
    checked = json.loads(res.output)
    assert checked["missing"] == checked["extra"] == 0 and checked["edges"] > 0
    pieces = checked["pieces"]
    assert checked["frozen_pieces"] < pieces  # frozen on the first file only

    graph.write_raw("MATCH (:Piece {corpus: $c})-[r:SIMILAR]->() WITH r LIMIT 1 DELETE r", c=corpus)
    res = CliRunner().invoke(app, ["piece-graph", "check", "--corpus", corpus, "--json"])
    assert res.exit_code == 1 and json.loads(res.output)["missing"] == 1

    res = CliRunner().invoke(app, ["piece-graph", "rebuild", "--corpus", corpus])
    assert res.exit_code == 0 and f"rebuilt: {pieces} pieces" in res.output, res.output
    res = CliRunner().invoke(app, ["piece-graph", "check", "--corpus", corpus, "--json"])
    rebuilt = json.loads(res.output)
    assert res.exit_code == 0 and rebuilt["frozen_pieces"] == pieces
    assert rebuilt["fresh_jaccard"] == 1.0
    drop_corpus(graph, corpus)


def test_candidates_stay_inside_the_corpus_when_others_hold_the_same_texts(
    graph_session, settings, embedder, tmp_path
):
    """Another corpus holding 60 copies of every piece fills any global fulltext top-100; the
    incremental update must still find its candidates in its own corpus."""
    graph, corpus = graph_session, "t-pg-crowded"
    drop_corpus(graph, corpus)
    settings = _with_piece_graph(settings, rebuild_factor=100.0)
    (first,) = _write_sources(tmp_path / "docs", n_files=1, per_file=4, skip=100)
    second = tmp_path / "docs" / "retold.md"  # the same facts retold: edges across the files
    second.write_text(
        first.read_text(encoding="utf-8").replace("# Source", "# Retold source"), encoding="utf-8"
    )
    try:
        # the decoys go in first, so equal scores rank them ahead of the corpus' own pieces
        scratch = "t-pg-crowded-scratch"
        assert ingest_paths(graph, settings, [first], scratch, embedder=embedder).status == (
            "completed"
        )
        texts = [r["text"] for r in graph.read("ingest/piece_texts", corpus=scratch)]
        drop_corpus(graph, scratch)
        graph.write_raw(
            "UNWIND range(1, 60) AS copy UNWIND range(0, size($texts) - 1) AS i "
            "CREATE (:Piece {id: 'decoy-' + toString(copy) + '-' + toString(i), "
            "corpus: 't-pg-decoy', text: $texts[i]})",
            texts=texts,
        )
        assert ingest_paths(graph, settings, [first], corpus, embedder=embedder).status == (
            "completed"
        )
        report = ingest_paths(graph, settings, [first, second], corpus, embedder=embedder)
        assert report.piece_graph_mode == "incremental"
        want = _rebuilt(graph, corpus, settings)
        sources = {
            r["id"]: r["s"]
            for r in graph.read_raw(
                "MATCH (p:Piece {corpus: $c}) RETURN p.id AS id, p.source_id AS s", c=corpus
            )
        }
        assert any(sources[a] != sources[b] for a, b in want), "no edge between the two files"
        _assert_same(_edges(graph, corpus), want)
    finally:
        graph.write_raw("MATCH (p:Piece {corpus: 't-pg-decoy'}) DETACH DELETE p")
        drop_corpus(graph, corpus)


def test_real_documents_added_incrementally_equal_the_frozen_build(
    graph_session, settings, embedder, tmp_path
):
    """Web pages and READMEs after a full build: URLs, code and e-mail addresses tokenise
    differently in Lucene's standard analyzer, so the candidate search runs on the piece graph's
    own terms (Piece.terms); searching the raw text missed 9 edges here."""
    graph, corpus = graph_session, "t-pg-documents"
    drop_corpus(graph, corpus)
    first, second = tmp_path / "b", tmp_path / "a"
    for folder, rels in ((first, ["md/markitdown-README.md", "html"]), (second, HALF_A_DOCS)):
        folder.mkdir()
        for rel in rels:
            src = DOCUMENTS / rel
            for f in [src] if src.is_file() else sorted(src.iterdir()):
                shutil.copy(f, folder / f.name)
    try:
        modes = [
            ingest_paths(graph, settings, [folder], corpus, embedder=embedder).piece_graph_mode
            for folder in (first, second)
        ]
        assert modes == ["full", "incremental"]
        _assert_same(_edges(graph, corpus), _rebuilt(graph, corpus, settings))
    finally:
        drop_corpus(graph, corpus)
