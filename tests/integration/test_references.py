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
    # _edges starts at the Corpus node, which the drop deletes: look for the sources themselves
    # (by their own corpus property) and any edge they kept; other corpora of the session's
    # server, left by earlier tests in this worker, may hold REFERENCES of their own
    left = graph.read_raw(
        "MATCH (s:Source {corpus: $c}) OPTIONAL MATCH (s)-[r:REFERENCES]-() "
        "RETURN count(DISTINCT s) AS sources, count(r) AS edges",
        c=corpus,
    )[0]
    assert left == {"sources": 0, "edges": 0}


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


def test_explain_shows_the_references_between_results(graph_session, settings, embedder, tmp_path):
    from kg_platform.retrieval.explain import SUBGRAPH_QUERY, subgraph_ids
    from kg_platform.retrieval.references_explain import reference_lines
    from kg_platform.sdk import KnowledgePlatform

    graph, corpus = graph_session, "t-refs-explain"
    drop_corpus(graph, corpus)
    folder = tmp_path / "docs"
    for n in ARTICLES:
        _write(folder, n, *ARTICLES[n])
    ingest_paths(graph, settings, [folder], corpus, embedder=embedder)
    kp = KnowledgePlatform(settings, graph=graph, embedder=embedder)
    items = kp.search("Who directed Pitch Perfect?", strategy="bm25", k=3, corpus=corpus).items
    assert {it.source_title for it in items} >= {"Pitch Perfect", "Jason Moore (director)"}
    lines = reference_lines(graph, items)
    assert lines[0].startswith("references")
    assert any(
        "'Pitch Perfect' -> #" in line and "'Jason Moore (director)'" in line and "both" in line
        for line in lines
    ), lines
    # the Browser snippet's subgraph holds the REFERENCES edges between the results' sources
    rows = graph.read(SUBGRAPH_QUERY, ids=subgraph_ids(items))
    kinds = {rel.type for r in rows if r["r"] is not None for rel in r["r"].relationships}
    assert "REFERENCES" in kinds
    drop_corpus(graph, corpus)


def test_the_references_hop_places_named_sources_after_their_parent(
    graph_session, settings, embedder, tmp_path
):
    from kg_platform.retrieval.base import RetrievalContext, RetrievedItem
    from kg_platform.retrieval.strategies.references_hop import add_referenced

    graph, corpus = graph_session, "t-refs-hop"
    drop_corpus(graph, corpus)
    folder = tmp_path / "docs"
    for n in ARTICLES:
        _write(folder, n, *ARTICLES[n])
    _write(folder, "other.md", "Toledo Museum of Art", "A museum in Ohio with glass.")
    ingest_paths(graph, settings, [folder], corpus, embedder=embedder)
    rows = graph.read_raw(
        "MATCH (c:Chunk {corpus: $c, level: 1}) MATCH (s:Source {id: c.source_id}) "
        "RETURN s.title AS title, c.id AS id, c.source_id AS sid",
        c=corpus,
    )
    chunk = {r["title"]: (r["id"], r["sid"]) for r in rows}

    def item(title: str) -> RetrievedItem:
        cid, sid = chunk[title]
        return RetrievedItem(id=cid, text=title, score=1.0, source_id=sid, source_title=title)

    ctx = RetrievalContext(graph=graph, embedder=embedder, settings=settings, corpus=corpus)
    # Kendrick's source names Pitch Perfect: it comes in right after her, with its first chunk
    # (only the first `top` items are parents: Jason Moore stays where he is)
    items = [item("Anna Kendrick"), item("Toledo Museum of Art"), item("Jason Moore (director)")]
    got = add_referenced(ctx, items, top=1, per=2)
    assert [it.source_title for it in got] == [
        "Anna Kendrick",
        "Pitch Perfect",
        "Toledo Museum of Art",
        "Jason Moore (director)",
    ]
    assert got[1].query == "retrieval/references_neighbours" and got[1].path[0] == items[0].id
    # a neighbour the walk ranked lower moves up behind the chunk that links it (most mentions
    # first: Moore and Pitch Perfect name each other three times, Kendrick twice)
    items = [item("Pitch Perfect"), item("Toledo Museum of Art"), item("Jason Moore (director)")]
    got = add_referenced(ctx, items, top=1, per=2)
    assert [it.source_title for it in got] == [
        "Pitch Perfect",
        "Jason Moore (director)",
        "Anna Kendrick",
        "Toledo Museum of Art",
    ]
    assert got[1] is items[2]  # moved, not fetched again
    assert len({it.source_id for it in got}) == len(got)
    drop_corpus(graph, corpus)
