"""The Neo4j Browser surface against a real, populated graph: every saved query of the guide
returns rows; the guide and style sheet are served by the local server from Browser's origin;
the guide carries every saved query verbatim."""

from __future__ import annotations

import html
import json
import re
import urllib.request
from pathlib import Path

import pytest

from kg_platform.browser import GUIDE_FILE, STYLE_FILE, browser_urls, render_guide, saved_queries
from support.fake_openai import FakeOpenAI, llm_settings_for

pytestmark = pytest.mark.integration

CORPUS = "browser-test"
SAMPLE = Path(__file__).resolve().parents[2] / "ingestion" / "samples" / "ibm-wikipedia.md"
FALLBACK = Path("/work/shared/bench/documents/md/docling-wiki-ibm.md")
_CAPS = re.compile(r"\b([A-Z][a-zA-Z]{2,}(?: [A-Z][a-zA-Z]{2,})?)\b")


def _passage(body: dict) -> str:
    user = body["messages"][-1]["content"]
    start = max(user.find("Content:\n"), user.find("Text:\n"))
    return user[start:].split("\n", 1)[1].split("\n\n")[0] if start >= 0 else user


def responder(body: dict) -> str:
    """A scripted LLM that answers from the passage itself (names it really contains)."""
    system = body["messages"][0]["content"]
    names = list(dict.fromkeys(_CAPS.findall(_passage(body))))[:3] or ["IBM", "Armonk"]
    if system.startswith("You write the questions"):
        return json.dumps({"questions": [f"What does the text say about {n}?" for n in names]})
    if system.startswith("You extract a knowledge graph"):
        ents = [{"name": n, "type": "concept", "description": ""} for n in names]
        rels = (
            [{"source": names[0], "target": names[1], "type": "related_to", "evidence": names[0]}]
            if len(names) > 1
            else []
        )
        return json.dumps({"entities": ents, "relations": rels})
    raise AssertionError(f"unexpected prompt {system[:60]!r}")


@pytest.fixture(scope="module")
def populated(graph_session, settings, embedder, tmp_path_factory):
    """The graph after the real write path: ingestion, distillation, a recorded retrieval and
    a stored decomposition answer."""
    from kg_platform.distilling.runner import distill_corpus
    from kg_platform.ingest import ingest_paths
    from kg_platform.llm import get_llm
    from kg_platform.reasoning.trajectory import new_trajectory_id, store_trajectory
    from kg_platform.sdk import KnowledgePlatform

    doc = SAMPLE if SAMPLE.exists() else FALLBACK
    # two short articles that name each other's titles: REFERENCES edges for their slide
    articles = tmp_path_factory.mktemp("articles")
    (articles / "armonk.md").write_text(
        "# Armonk, New York\n\nArmonk is a hamlet where Thomas J. Watson built a campus.\n",
        encoding="utf-8",
    )
    (articles / "watson.md").write_text(
        "# Thomas J. Watson\n\nThomas J. Watson led the company from Armonk, New York.\n",
        encoding="utf-8",
    )
    report = ingest_paths(graph_session, settings, [doc, articles], CORPUS, embedder=embedder)
    assert report.status == "completed", report.summary()
    with FakeOpenAI(responder) as server:
        s = llm_settings_for(server, tmp_path_factory.mktemp("llm-cache"), concurrency=2)
        s = settings.model_copy(update={"llm": s.llm, "cache_dir": s.cache_dir})
        llm = get_llm(s)
        try:
            rep = distill_corpus(
                graph_session, embedder, llm, s, corpus=CORPUS, steps=["atomic", "entities"]
            )
        finally:
            llm.close()
    assert rep.results["atomic"]["written"] > 0, rep.to_dict()
    kp = KnowledgePlatform(settings, graph=graph_session, embedder=embedder)
    found = kp.search(
        "Where is IBM headquartered?", strategy="hybrid", k=3, corpus=CORPUS, record=True
    )
    items, answer_id = found.items, found.answer_id
    assert items and answer_id
    chunk_ids = [
        r["id"]
        for r in graph_session.read_raw(
            "MATCH (c:L1 {corpus: $corpus}) RETURN c.id AS id ORDER BY c.id LIMIT 2", corpus=CORPUS
        )
    ]
    store_trajectory(
        graph_session,
        trajectory_id=new_trajectory_id("q"),
        question="q",
        corpus=CORPUS,
        kind="ask",
        steps=[{"round": 1}],
        answer="a",
        stop_reason="done",
        chunk_ids=chunk_ids,
        tokens=1,
        prompt_tokens=1,
        completion_tokens=0,
        cost_usd=0.0,
    )
    return {"graph": graph_session, "answer_id": answer_id, "items": items}


def test_every_saved_query_returns_rows(populated) -> None:
    graph = populated["graph"]
    queries = saved_queries()
    assert len(queries) >= 10
    empty = [q.name for q in queries if not graph.read(q.statement)]
    assert empty == [], f"saved queries without rows on a populated graph: {empty}"


def test_why_retrieved_explains_a_recorded_retrieval(populated) -> None:
    graph, answer_id = populated["graph"], populated["answer_id"]
    query = next(q for q in saved_queries() if q.name == "11_why_retrieved")
    rows = graph.read_raw(
        query.text.replace("WITH '' AS answerId", "WITH $a AS answerId"), a=answer_id
    )
    assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    assert rows[0]["answer_id"] == answer_id and rows[0]["found_by"] == "hybrid"
    assert rows[0]["score"] == pytest.approx(populated["items"][0].score)
    assert rows[0]["source"] and rows[0]["chunk_id"]


def test_guide_holds_every_saved_query() -> None:
    page = html.unescape(render_guide())
    for q in saved_queries():
        assert q.text in page, q.name
    assert ":style node {" in page


def test_local_server_serves_guide_and_style_from_browser_origin(neo4j_server) -> None:
    if not neo4j_server.get("http_port"):
        pytest.skip("an external test server does not serve the guide")
    urls = browser_urls(f"http://127.0.0.1:{neo4j_server['http_port']}")
    assert urls["guide"].startswith("http://localhost:")  # Browser's default allow-list
    with urllib.request.urlopen(urls["guide"].replace("localhost", "127.0.0.1"), timeout=30) as r:
        assert r.status == 200
        assert "kg-platform: your graph" in r.read().decode()
    style_url = urls["guide"].replace(GUIDE_FILE, STYLE_FILE).replace("localhost", "127.0.0.1")
    with urllib.request.urlopen(style_url, timeout=30) as r:
        assert "node.Chunk" in r.read().decode()
    with urllib.request.urlopen(urls["browser"], timeout=30) as r:  # Browser still works
        assert "Neo4j Browser" in r.read().decode()
