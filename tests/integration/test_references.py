"""REFERENCES edges on a real Neo4j: built at ingestion, incrementally (new passages naming
existing titles and existing passages naming new ones), equal to a full build, idempotent on
re-ingest, and gone with the sources that held them."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg_platform.ingest import ingest_paths
from kg_platform.ingest.references import desired_references, sync_references
from kg_platform.ingest.writer import drop_corpus

pytestmark = pytest.mark.integration

ARTICLES = {
    "moore.md": (
        "Jason Moore (director)",
        "Jason Moore is an American director of film and theatre. His first feature film was "
        "Pitch Perfect, a musical comedy; Pitch Perfect's success led to a sequel.",
    ),
    "pitch.md": (
        "Pitch Perfect",
        "Pitch Perfect is a 2012 American musical comedy film directed by Jason Moore. The film "
        "stars Anna Kendrick as Beca.",
    ),
    "kendrick.md": (
        "Anna Kendrick",
        "Anna Kendrick is an American actress. She starred in Pitch Perfect and in Up in the Air, "
        "and grew up in Portland, Maine.",
    ),
}


def _write(folder: Path, name: str, title: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"# {title}\n\n{text}\n", encoding="utf-8")
    return path


def _edges(graph, corpus: str) -> dict[tuple[str, str], int]:
    rows = graph.read_raw(
        "MATCH (:Corpus {name: $c})-[:HAS_SOURCE]->(a:Source)-[r:REFERENCES]->(b:Source) "
        "RETURN a.title AS a, b.title AS b, r.mentions AS n",
        c=corpus,
    )
    return {(r["a"], r["b"]): r["n"] for r in rows}


def _full(graph, corpus: str) -> dict[tuple[str, str], int]:
    """A full build computed here from the stored titles and texts, not from the edges."""
    rows = graph.read("ingest/references_sources", corpus=corpus)
    titles = {r["id"]: r["title"] for r in rows}
    texts = {
        r["id"]: list(r["texts"]) for r in graph.read("ingest/references_texts", ids=sorted(titles))
    }
    return {(titles[a], titles[b]): n for (a, b), n in desired_references(titles, texts).items()}


def test_incremental_builds_equal_a_full_one(graph_session, settings, embedder, tmp_path):
    graph, corpus = graph_session, "t-refs-incremental"
    drop_corpus(graph, corpus)
    folder = tmp_path / "docs"
    paths = {n: _write(folder, n, *ARTICLES[n]) for n in ARTICLES}
    report = ingest_paths(graph, settings, [paths["moore.md"]], corpus, embedder=embedder)
    assert report.status == "completed", report.summary()
    assert _edges(graph, corpus) == {}  # nothing to name yet
    # a new passage names an existing title, and the existing passage names the new one
    report = ingest_paths(
        graph, settings, [paths["moore.md"], paths["pitch.md"]], corpus, embedder=embedder
    )
    assert report.counts["references_added"] == 2
    assert _edges(graph, corpus) == {
        ("Pitch Perfect", "Jason Moore (director)"): 1,
        ("Jason Moore (director)", "Pitch Perfect"): 2,
    }
    report = ingest_paths(graph, settings, [folder], corpus, embedder=embedder)
    want = {
        ("Pitch Perfect", "Jason Moore (director)"): 1,
        ("Jason Moore (director)", "Pitch Perfect"): 2,
        ("Pitch Perfect", "Anna Kendrick"): 1,
        ("Anna Kendrick", "Pitch Perfect"): 1,
    }
    assert _edges(graph, corpus) == want == _full(graph, corpus)
    # idempotent: the same files again change nothing and write nothing
    report = ingest_paths(graph, settings, [folder], corpus, embedder=embedder)
    assert "references_added" not in report.counts
    assert _edges(graph, corpus) == want
    # a replaced passage that no longer names a title loses that edge
    _write(folder, "kendrick.md", "Anna Kendrick", "Anna Kendrick is an American actress.")
    report = ingest_paths(graph, settings, [folder], corpus, embedder=embedder)
    assert report.counts["references_removed"] == 1
    got = _edges(graph, corpus)
    assert ("Anna Kendrick", "Pitch Perfect") not in got
    assert got == _full(graph, corpus)
    # a pruned source takes its edges, both ways, with it
    paths["pitch.md"].unlink()
    report = ingest_paths(graph, settings, [folder], corpus, prune=True, embedder=embedder)
    assert report.pruned == [str(paths["pitch.md"])]
    assert _edges(graph, corpus) == {}
    # a full rebuild on demand gives what the increments gave
    _write(folder, "pitch.md", *ARTICLES["pitch.md"])
    ingest_paths(graph, settings, [folder], corpus, embedder=embedder)
    incremental = _edges(graph, corpus)
    done = sync_references(graph, corpus, force=True)
    assert done.mode == "full" and done.added == done.removed == 0
    assert _edges(graph, corpus) == incremental == _full(graph, corpus)
    assert incremental
    drop_corpus(graph, corpus)
    assert _edges(graph, corpus) == {}
    assert graph.read_raw("MATCH ()-[r:REFERENCES]->() RETURN count(r) AS n")[0]["n"] == 0


def test_a_renamed_source_is_looked_for_again(graph_session, settings, embedder, tmp_path):
    """Existing passages that name a source's new title reach it, the old title's edges go."""
    graph, corpus = graph_session, "t-refs-renamed"
    drop_corpus(graph, corpus)
    folder = tmp_path / "docs"
    for n in ARTICLES:
        _write(folder, n, *ARTICLES[n])
    _write(folder, "extra.md", "Portland, Maine", "Portland is a city in Maine.")
    ingest_paths(graph, settings, [folder], corpus, embedder=embedder)
    assert ("Anna Kendrick", "Portland, Maine") in _edges(graph, corpus)
    _write(folder, "extra.md", "Up in the Air", "Up in the Air is a 2009 film.")
    report = ingest_paths(graph, settings, [folder], corpus, embedder=embedder)
    assert report.status == "completed", report.summary()
    got = _edges(graph, corpus)
    assert ("Anna Kendrick", "Up in the Air") in got
    assert ("Anna Kendrick", "Portland, Maine") not in got
    assert got == _full(graph, corpus)
    drop_corpus(graph, corpus)
