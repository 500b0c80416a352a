"""A parser change re-parses files whose bytes did not change: the parsers' version is part of
each source's pipeline signature, so the skip-by-hash check lets an unchanged file through only
while the version is the same."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg_platform import parsing
from kg_platform.ingest import ingest_paths
from kg_platform.ingest.writer import drop_corpus


def _doc(folder: Path) -> Path:
    path = folder / "notes.md"
    path.write_text(
        "# Quokka notes\n\nThe quokka is a small marsupial of Rottnest Island.\n", encoding="utf-8"
    )
    return path


def test_a_new_parser_version_reparses_an_unchanged_file(
    graph_session, settings, embedder, tmp_path, monkeypatch: pytest.MonkeyPatch
):
    corpus = "t-parser-version"
    drop_corpus(graph_session, corpus)
    uri = str(_doc(tmp_path))
    first = ingest_paths(graph_session, settings, [tmp_path], corpus, embedder=embedder)
    assert first.status == "completed" and first.added == [uri], first.summary()
    stored = graph_session.read_raw(
        "MATCH (s:Source {corpus: $c}) RETURN s.pipeline AS p", c=corpus
    )[0]["p"]
    assert stored.endswith(f"|parse={parsing.PARSER_VERSION}")

    same = ingest_paths(graph_session, settings, [tmp_path], corpus, embedder=embedder)
    assert same.skipped == [uri] and not same.added and not same.replaced

    monkeypatch.setattr(parsing, "PARSER_VERSION", parsing.PARSER_VERSION + "-next")
    bumped = ingest_paths(graph_session, settings, [tmp_path], corpus, embedder=embedder)
    assert bumped.replaced == [uri] and not bumped.skipped, bumped.summary()

    again = ingest_paths(graph_session, settings, [tmp_path], corpus, embedder=embedder)
    assert again.skipped == [uri] and not again.replaced
    drop_corpus(graph_session, corpus)


def test_a_callers_parser_records_its_own_version(graph_session, settings, embedder, tmp_path):
    corpus = "t-parser-version-own"
    drop_corpus(graph_session, corpus)
    uri = str(_doc(tmp_path))

    class Parser:
        def __init__(self, version: str | None) -> None:
            self.version = version

        def __call__(self, path: Path) -> parsing.ParsedDocument:
            return parsing.parse_file(path)

    v1 = ingest_paths(
        graph_session, settings, [tmp_path], corpus, embedder=embedder, parser=Parser("a")
    )
    assert v1.added == [uri]
    same = ingest_paths(
        graph_session, settings, [tmp_path], corpus, embedder=embedder, parser=Parser("a")
    )
    assert same.skipped == [uri]
    v2 = ingest_paths(
        graph_session, settings, [tmp_path], corpus, embedder=embedder, parser=Parser("b")
    )
    assert v2.replaced == [uri]
    drop_corpus(graph_session, corpus)
