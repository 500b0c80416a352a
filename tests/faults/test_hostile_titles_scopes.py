"""Hostile strings as document titles and as ``--scope`` values (corpus names and questions are
covered by their own modules): Cypher fragments, backticks, ``$`` parameters, Lucene syntax,
quotes and backslashes, NUL, and very long strings. Titles are stored exactly as the document
gives them, a scope equal to one of them selects that document and nothing else, and a scope that
matches nothing is one clear line (exit 2), never a stack trace, never a wildcard; the graph is
left as it was."""

from __future__ import annotations

import json

import pytest

from kg_platform.errors import KGPError
from kg_platform.ingest import ingest_paths
from kg_platform.ingest.writer import drop_corpus
from kg_platform.retrieval.scope import ScopeError
from tests.faults.helpers import kgp_env, run_kgp

pytestmark = [pytest.mark.faults, pytest.mark.integration]

CORPUS = "t-hostile-titles"
TITLES = [
    "x' }) MATCH (n) DETACH DELETE n //",
    "`tick`) RETURN 1 UNION MATCH (s:Source) RETURN s //",
    "$corpus ${x} {{y}} $1",
    'title:IBM AND text:* ~2 ^4 "unclosed (paren [range TO *}',
    "back\\slash 'single' \"double\"",
    "Long " + "\u00e9tude " * 2500 + "end",  # ~15,000 characters
]
SCOPES_MATCHING_NOTHING = [
    "MATCH (s:Source) DETACH DELETE s",
    "' OR 1=1 OR s.title = '",
    "*",
    "%",
    ".*",
    "$corpus",
    "`",
    "\\",
    "nul\x00byte",
    "\x00",
    "z" * 20_000,
    "title:* OR text:*",
    "../../etc/passwd",
    "x' }) MATCH (n) DETACH DELETE n",
]  # a prefix of a title is not the title
STRATEGIES = ["bm25", "vector", "hybrid", "mog", "mogg", "propagate"]
BODY = (
    "IBM mainframes are large computers. They run batch jobs and transactions all day. "
    "Document number {i} says so in its own words.\n"
)


def _count(graph) -> tuple[int, int]:
    row = graph.read_raw("MATCH (n) WITH count(n) AS n MATCH ()-[r]->() RETURN n, count(r) AS r")[0]
    return row["n"], row["r"]


@pytest.fixture(scope="module")
def platform(graph_session, settings, embedder, tmp_path_factory):
    from kg_platform.sdk.platform import KnowledgePlatform

    folder = tmp_path_factory.mktemp("hostile-titles")
    for i, title in enumerate(TITLES):
        (folder / f"doc{i}.md").write_text(f"# {title}\n\n" + BODY.format(i=i))
    drop_corpus(graph_session, CORPUS)
    report = ingest_paths(graph_session, settings, [folder], CORPUS, embedder=embedder)
    assert report.status == "completed", report.errors
    return KnowledgePlatform(settings, graph=graph_session, embedder=embedder)


def _sources(graph) -> dict[str, str]:
    rows = graph.read_raw("MATCH (s:Source {corpus: $c}) RETURN s.title AS t, s.id AS id", c=CORPUS)
    return {r["t"]: r["id"] for r in rows}


def test_titles_are_stored_exactly_as_written(platform):
    assert sorted(_sources(platform.graph)) == sorted(TITLES)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_hostile_title_as_scope_selects_that_document_only(platform, strategy):
    ids = _sources(platform.graph)
    before = _count(platform.graph)
    for title in TITLES:
        items = platform.retrieve(
            "IBM mainframes batch jobs", strategy=strategy, k=3, corpus=CORPUS, scope=[title]
        )
        assert items, (strategy, title[:40])
        assert {it.source_id for it in items} == {ids[title]}, (strategy, title[:40])
    assert _count(platform.graph) == before


def test_scopes_matching_nothing_are_refused_and_alter_nothing(platform):
    before = _count(platform.graph)
    failures = {}
    for value in SCOPES_MATCHING_NOTHING:
        try:
            items = platform.retrieve("IBM", strategy="hybrid", k=3, corpus=CORPUS, scope=[value])
            failures[value[:40]] = f"no error, {len(items)} items"
        except ScopeError as exc:
            assert "\n" not in exc.args[0]  # the reason is one line; the hint follows
        except Exception as exc:  # noqa: BLE001 - collected so the assertion names every one
            failures[value[:40]] = f"{type(exc).__name__}: {str(exc)[:200]}"
    assert failures == {}
    assert _count(platform.graph) == before
    assert sorted(_sources(platform.graph)) == sorted(TITLES)


def test_the_cli_takes_hostile_scopes_as_data(platform, settings):
    env = kgp_env(settings)
    ids = _sources(platform.graph)
    title = TITLES[1]
    ok = run_kgp(
        [
            "retrieve",
            "IBM mainframes",
            "--strategy",
            "hybrid",
            "--corpus",
            CORPUS,
            "--scope",
            title,
            "--json",
        ],
        env,
        timeout=300,
    )
    assert ok.returncode == 0, ok.stderr[-2000:]
    items = json.loads(ok.stdout)["items"]
    assert items and {it["source_id"] for it in items} == {ids[title]}
    bad = run_kgp(
        [
            "retrieve",
            "IBM",
            "--strategy",
            "hybrid",
            "--corpus",
            CORPUS,
            "--scope",
            SCOPES_MATCHING_NOTHING[0],
            "--scope",
            "$corpus",
        ],
        env,
        timeout=300,
    )
    assert bad.returncode == 2, (bad.returncode, bad.stderr[-2000:])
    assert "Traceback" not in bad.stderr
    errors = [ln for ln in bad.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "no source matches the scope" in errors[0], bad.stderr
    assert "hint:" in bad.stderr
    assert isinstance(ScopeError("x"), KGPError)
