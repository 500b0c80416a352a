"""F4/F5 and hostile strings: questions with Lucene syntax, Cypher fragments, NUL, punctuation
only, nothing at all, or more than Lucene's 1,024 clauses go through every lexical strategy
without an error, and a long question still finds the text it is about."""

from __future__ import annotations

import pytest

from kg_platform.errors import KGPError
from kg_platform.ingest import ingest_paths
from kg_platform.graph.lucene import MAX_TERMS, fulltext_query
from tests.conftest import DOCUMENTS

pytestmark = [pytest.mark.faults, pytest.mark.integration]

CORPUS = "t-hostile-q"
STRATEGIES = ["bm25", "hybrid", "mog", "mogg", "propagate", "vector", "peer-neo4j-graphrag-hybrid"]
# over Lucene's 1,024 clauses within the request contract's 4,000 characters: 1,245 terms
LONG = " ".join(["IBM", "pc", "os", "io", "ai"] * 249)
TOO_LONG = " ".join(["IBM", "mainframe", "computer", "history", "company"] * 600)  # 3,000 terms
HOSTILE = [
    "",
    "   ",
    "?!...",
    "()[]{}",
    "\\",
    '"',
    "AND OR NOT",
    '+-&&||!(){}[]^"~*?:\\/',
    "x' }) MATCH (n) DETACH DELETE n //",
    "`backtick` $param ${x}",
    "title:IBM AND text:*",
    "nul\x00byte",
    'IBM~2 mainframe^4 "unclosed',
    "a" * 20_000,
    LONG,
]


@pytest.fixture(scope="module")
def platform(graph_session, settings, embedder):
    from kg_platform.sdk.platform import KnowledgePlatform

    doc = DOCUMENTS / "md" / "docling-wiki-ibm.md"
    report = ingest_paths(graph_session, settings, [doc], CORPUS, embedder=embedder)
    assert report.status == "completed", report
    return KnowledgePlatform(settings, graph=graph_session, embedder=embedder)


def test_fulltext_query_never_exceeds_the_clause_limit():
    assert len(fulltext_query(LONG).split()) == MAX_TERMS
    assert fulltext_query("?!...") == ""
    cjk = "\u6771\u4eac" * 800  # 1,600 ideographs in one whitespace token: Lucene makes 1,600 terms
    assert fulltext_query(f"IBM {cjk}") == "IBM"


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_hostile_questions_never_crash_a_strategy(platform, strategy):
    if strategy.startswith("peer-"):
        pytest.importorskip("neo4j_graphrag")
    before = platform.graph.read_raw("MATCH (n) RETURN count(n) AS n")[0]["n"]
    failures = {}
    for query in HOSTILE:
        try:
            platform.retrieve(query, strategy=strategy, k=3, corpus=CORPUS)
        except KGPError as exc:  # a clear refusal is acceptable; a leaked driver error is not
            assert "Traceback" not in str(exc)
        except Exception as exc:  # noqa: BLE001 - collected so the assertion names every one
            failures[query[:40]] = f"{type(exc).__name__}: {str(exc)[:200]}"
    assert failures == {}
    after = platform.graph.read_raw("MATCH (n) RETURN count(n) AS n")[0]["n"]
    assert after == before  # nothing altered (no retrieval records were asked for)


@pytest.mark.parametrize("strategy", ["bm25", "hybrid", "mog", "mogg", "propagate"])
def test_a_question_over_a_thousand_terms_still_finds_its_text(platform, strategy):
    assert len(LONG) <= 4000 and len(LONG.split()) > 1024
    items = platform.retrieve(LONG, strategy=strategy, k=3, corpus=CORPUS)
    assert items, f"{strategy} found nothing for a long question about IBM"
    assert any("IBM" in (item.text or "") for item in items)


def test_a_question_over_the_contracts_length_is_refused_naming_the_bound(platform):
    from kg_platform.errors import InvalidRequest

    with pytest.raises(InvalidRequest, match="at most 4,000 characters"):
        platform.retrieve(TOO_LONG, strategy="bm25", k=3, corpus=CORPUS)
