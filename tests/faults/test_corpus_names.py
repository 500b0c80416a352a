"""F8 and hostile corpus names: an empty name is refused everywhere with a one-line reason (it used
to mean "every corpus" to mog/mogg and "nothing" to the others, and fell back to the default on
ingest); hostile but non-empty names are stored and searched as plain parameters."""

from __future__ import annotations

import pytest

from kg_platform.errors import ConfigError
from kg_platform.ingest import ingest_paths
from tests.conftest import DOCUMENTS
from tests.faults.helpers import kgp_env, run_kgp

pytestmark = [pytest.mark.faults, pytest.mark.integration]

DOC = DOCUMENTS / "md" / "pdfplumber-README.md"
# "ü" * 200: the longest name the request contract takes (kg_platform.requests, 1..200 characters)
HOSTILE_NAMES = ["x'}) DETACH DELETE n //", "`tick`", "$corpus", "title:* AND NOT x", "ü" * 200]


@pytest.fixture()
def platform(graph_session, settings, embedder):
    from kg_platform.sdk.platform import KnowledgePlatform

    return KnowledgePlatform(settings, graph=graph_session, embedder=embedder)


@pytest.mark.parametrize("strategy", ["bm25", "vector", "hybrid", "mog", "mog-dense", "mogg"])
@pytest.mark.parametrize("name", ["", "  "])
def test_empty_corpus_is_refused_by_every_strategy(platform, strategy, name):
    with pytest.raises(ConfigError, match="corpus name"):
        platform.retrieve("What is pdfplumber?", strategy=strategy, corpus=name)


def test_empty_corpus_is_refused_by_ingest_and_distill(platform, tmp_path):
    with pytest.raises(ConfigError, match="corpus name"):
        platform.ingest([DOC], corpus="")
    with pytest.raises(ConfigError, match="corpus name"):
        platform.distill(corpus="")


def test_kgp_ingest_with_an_empty_corpus_exits_2_with_one_line(settings):
    res = run_kgp(["ingest", str(DOC), "--corpus", ""], kgp_env(settings))
    assert res.returncode == 2
    assert "Traceback" not in res.stderr
    assert res.stderr.startswith("error: the corpus name ''"), res.stderr[-2000:]
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 2 and lines[1].lstrip().startswith("hint:"), lines  # reason, hint
    assert "Loading weights" not in res.stderr  # refused before the model loads


def test_hostile_corpus_names_are_plain_data(graph_session, settings, embedder, platform, tmp_path):
    # a short file: each name ingests it (the names are what is tested, not the parsing)
    small = tmp_path / "tables.md"
    small.write_text(
        "# pdfplumber\n\npdfplumber extracts tables from PDF pages.\n\n"
        "## Tables\n\nEach table comes back as rows of cells, one list per row.\n"
    )
    total = graph_session.read_raw("MATCH (n) RETURN count(n) AS n")[0]["n"]
    for name in HOSTILE_NAMES:
        report = ingest_paths(graph_session, settings, [small], name, embedder=embedder)
        assert report.status == "completed", report.summary()
        rows = graph_session.read_raw("MATCH (s:Source {corpus: $c}) RETURN s.corpus AS c", c=name)
        assert [r["c"] for r in rows] == [name]
        items = platform.retrieve("pdfplumber tables", strategy="bm25", corpus=name, k=3)
        assert items and all(
            platform.graph.read_raw("MATCH (c:Chunk {id: $id}) RETURN c.corpus AS c", id=i.id)[0][
                "c"
            ]
            == name
            for i in items
        )
    assert graph_session.read_raw("MATCH (n) RETURN count(n) AS n")[0]["n"] > total
    with pytest.raises(ConfigError, match="corpus must have at most 200 characters"):
        platform.retrieve("pdfplumber tables", strategy="bm25", corpus="ü" * 201, k=3)
    # one bound at every door: a name one character longer cannot be created either
    with pytest.raises(ConfigError, match="corpus must have at most 200 characters"):
        platform.ingest([DOC], corpus="ü" * 201)
    with pytest.raises(ConfigError, match="at most 200 are allowed"):
        ingest_paths(graph_session, settings, [DOC], "ü" * 201, embedder=embedder)
    assert not graph_session.read_raw(
        "MATCH (s:Source {corpus: $c}) RETURN s.corpus AS c", c="ü" * 201
    )
