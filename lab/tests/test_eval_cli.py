"""``kgp lab eval`` end to end on a small slice of a dev file, and the baselines/peers it compares.

The corpus is built here straight from the dataset's paragraphs following docs/graph-model.md
(one Source per paragraph, one root Section, the whole paragraph as one level-2 chunk), so the
test exercises the harness, the strategies and the report against the real Neo4j without
depending on the ingestion pipeline; the ingestion path itself is covered by test_eval_ingest.py.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from tests.support.data import DEV
from tests.support.fixtures import index_corpus


pytestmark = pytest.mark.integration

HOTPOT = DEV / "hotpotqa.jsonl"
MUSIQUE = DEV / "musique.jsonl"
N_QUESTIONS = 4


def _h(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:24]


def build_qa_corpus(graph, embedder, path: Path, corpus: str, questions: int) -> int:
    """Write the paragraphs of the first ``questions`` rows as level-2 chunks of ``corpus``."""
    paragraphs: dict[str, dict] = {}
    with path.open() as fh:
        for _, line in zip(range(questions), fh):
            for p in json.loads(line)["paragraphs"]:
                paragraphs.setdefault(p["doc_id"], p)
    rows = []
    texts = [" ".join(s.strip() for s in p["sentences"]) for p in paragraphs.values()]
    vectors = embedder.embed(texts)
    for (doc_id, p), text, vec in zip(paragraphs.items(), texts, vectors):
        sid = _h(corpus, f"qa://test/{doc_id}")
        rows.append(
            {
                "source_id": sid,
                "uri": f"qa://test/{doc_id}",
                "title": p["title"],
                "section_id": _h(sid, "root"),
                "chunk_id": _h(sid, "2", "0", text),
                "text": text,
                "tokens": len(text.split()),
                "embedding": vec.tolist(),
            }
        )
    graph.write_raw(
        """
        MERGE (k:Corpus {name: $corpus})
        WITH k UNWIND $rows AS row
        MERGE (s:Source {id: row.source_id})
          SET s.corpus = $corpus, s.uri = row.uri, s.title = row.title
        MERGE (k)-[:HAS_SOURCE]->(s)
        MERGE (sec:Section {id: row.section_id})
          SET sec.corpus = $corpus, sec.source_id = row.source_id, sec.level = 0, sec.ord = 0,
              sec.title = row.title
        MERGE (s)-[:HAS_SECTION]->(sec)
        MERGE (c:Chunk:L2 {id: row.chunk_id})
          SET c.corpus = $corpus, c.source_id = row.source_id, c.section_id = row.section_id,
              c.level = 2, c.ord = 0, c.text = row.text, c.tokens = row.tokens, c.kind = 'text',
              c.segmenter = 'fixed'
        WITH c, row, sec CALL db.create.setNodeVectorProperty(c, 'embedding', row.embedding)
        MERGE (sec)-[:HAS_CHUNK]->(c)
        """,
        corpus=corpus,
        rows=rows,
    )
    index_corpus(graph, corpus)  # hand-written nodes: the corpus's own labels and indexes
    return len(rows)


def drop_corpora(graph, names: list[str]) -> None:
    graph.write_raw(
        "MATCH (n) WHERE n.corpus IN $names OR (n:Corpus AND n.name IN $names) DETACH DELETE n",
        names=names,
    )


@pytest.fixture(scope="module")
def eval_graph(graph_session, embedder):
    """Two corpora on one database: the evaluated one and a decoy with another file's paragraphs."""
    drop_corpora(graph_session, ["test-hotpot", "decoy-musique"])
    build_qa_corpus(graph_session, embedder, HOTPOT, "test-hotpot", N_QUESTIONS)
    build_qa_corpus(graph_session, embedder, MUSIQUE, "decoy-musique", 2)
    return graph_session


def _ctx(graph, embedder, settings, corpus):
    from kg_platform.retrieval.base import RetrievalContext

    return RetrievalContext(graph=graph, embedder=embedder, settings=settings, corpus=corpus)


ALL = ["bm25", "vector", "hybrid", "peer-neo4j-graphrag-vector", "peer-neo4j-graphrag-hybrid"]


@pytest.mark.parametrize("name", ALL)
def test_strategy_stays_inside_the_corpus_and_finds_the_obvious_chunk(
    eval_graph, embedder, settings, name
):
    from kg_platform.retrieval.base import get_strategy

    text = eval_graph.read_raw(
        "MATCH (c:L2 {corpus: 'decoy-musique'}) RETURN c.text AS t ORDER BY c.id LIMIT 1"
    )[0]["t"]
    # Asking the evaluated corpus for a decoy paragraph's own text must return no decoy chunk.
    items = get_strategy(name, _ctx(eval_graph, embedder, settings, "test-hotpot")).retrieve(
        text, 5
    )
    assert len(items) == 5
    corpora = {
        r["c"]
        for r in eval_graph.read_raw(
            "MATCH (c:Chunk) WHERE c.id IN $ids RETURN DISTINCT c.corpus AS c",
            ids=[i.id for i in items],
        )
    }
    assert corpora == {"test-hotpot"}
    # In its own corpus the paragraph is found first.
    own = get_strategy(name, _ctx(eval_graph, embedder, settings, "decoy-musique")).retrieve(
        text, 3
    )
    assert own[0].text == text
    assert len({i.id for i in own}) == len(own)


def test_bm25_survives_lucene_syntax_in_questions(eval_graph, embedder, settings):
    from kg_platform.retrieval.base import get_strategy

    for name in ("bm25", "peer-neo4j-graphrag-hybrid"):
        strategy = get_strategy(name, _ctx(eval_graph, embedder, settings, "test-hotpot"))
        assert strategy.retrieve('Who wrote "Havanese: AND (dogs)?" OR NOT [x]~ /y', 3)


def test_kgp_eval_end_to_end_json_table_per_question_and_plot(eval_graph, cli_env, tmp_path):
    from typer.testing import CliRunner

    from kg_platform.cli.main import app
    from kg_platform_lab.evaluation.report import validate_report

    out, perq, png = tmp_path / "r.json", tmp_path / "q.jsonl", tmp_path / "p.png"
    res = CliRunner().invoke(
        app,
        [
            "lab",
            "eval",
            "--dataset",
            str(HOTPOT),
            "--strategy",
            ",".join(ALL),
            "--k",
            "5",
            "--limit",
            str(N_QUESTIONS),
            "--corpus",
            "test-hotpot",
            "--no-ingest",
            "--quiet",
            "--json",
            str(out),
            "--per-question",
            str(perq),
            "--plot",
            str(png),
        ],
    )
    assert res.exit_code == 0, res.output + repr(res.exception)
    report = json.loads(out.read_text())
    assert validate_report(report) == []
    assert report["questions"] == N_QUESTIONS and report["k"] == 5
    assert report["budget_tokens"] is None
    assert list(report["strategies"]) == ALL
    for _name, block in report["strategies"].items():
        assert block["n"] == N_QUESTIONS and block["errors"] == 0
        for key in ("paragraph_recall", "sentence_recall", "all_supporting_found", "mrr"):
            assert 0.0 <= block[key] <= 1.0
        assert (
            block["context_tokens"] > 0 and block["latency_ms_p95"] >= block["latency_ms_p50"] > 0
        )
        assert len(block["curve"]) == 5
    # Whole paragraphs are chunks and each question's gold is among ~40 paragraphs: the
    # baselines must find most supporting paragraphs.
    assert report["strategies"]["bm25"]["paragraph_recall"] >= 0.5
    assert report["strategies"]["vector"]["paragraph_recall"] >= 0.5
    assert "bm25" in res.output and "sent R" in res.output
    rows = [json.loads(line) for line in perq.read_text().splitlines()]
    assert len(rows) == N_QUESTIONS * len(ALL)
    assert all(len(r["ids"]) <= 5 and len(r["hits"]) == len(r["ids"]) for r in rows)
    assert png.stat().st_size > 10_000 and png.read_bytes()[:4] == b"\x89PNG"
    # kgp lab compare reads the same file: bm25 against vector, paired over every question
    cmp = CliRunner().invoke(
        app,
        ["lab", "compare", str(perq), str(perq), "--strategy-a", "bm25", "--strategy-b", "vector"]
        + ["--resamples", "500", "--json", str(tmp_path / "c.json")],
    )
    assert cmp.exit_code == 0, cmp.output + repr(cmp.exception)
    c = json.loads((tmp_path / "c.json").read_text())
    assert c["n"] == N_QUESTIONS and c["metric"] == "paragraph_recall"
    assert c["mean_a"] == pytest.approx(report["strategies"]["bm25"]["paragraph_recall"])
    assert c["mean_b"] == pytest.approx(report["strategies"]["vector"]["paragraph_recall"])
    assert c["wins"] + c["losses"] + c["ties"] == N_QUESTIONS


def test_kgp_eval_budget_cuts_at_equal_cost(eval_graph, cli_env, tmp_path):
    from typer.testing import CliRunner

    from kg_platform.cli.main import app

    out = tmp_path / "b.json"
    res = CliRunner().invoke(
        app,
        [
            "lab",
            "eval",
            "--dataset",
            str(HOTPOT),
            "--strategy",
            "bm25,vector",
            "--budget-tokens",
            "150",
            "--limit",
            "3",
            "--corpus",
            "test-hotpot",
            "--no-ingest",
            "--quiet",
            "--json",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output + repr(res.exception)
    report = json.loads(out.read_text())
    assert report["budget_tokens"] == 150
    for block in report["strategies"].values():
        assert 100 < block["context_tokens"] <= 150  # filled up to, never past, the budget


def test_kgp_eval_errors_are_clear(eval_graph, cli_env, tmp_path):
    from typer.testing import CliRunner

    from kg_platform.cli.main import app
    from kg_platform.errors import EvaluationError

    runner = CliRunner()
    res = runner.invoke(
        app,
        [
            "lab",
            "eval",
            "--dataset",
            str(HOTPOT),
            "--strategy",
            "nope",
            "--no-ingest",
            "--corpus",
            "test-hotpot",
        ],
    )
    assert isinstance(res.exception, EvaluationError) and "kgp lab eval --list" in str(
        res.exception
    )
    res = runner.invoke(
        app,
        [
            "lab",
            "eval",
            "--dataset",
            str(HOTPOT),
            "--strategy",
            "bm25",
            "--no-ingest",
            "--corpus",
            "no-such-corpus",
            "--limit",
            "1",
        ],
    )
    assert isinstance(res.exception, EvaluationError) and "no level-2 chunks" in str(res.exception)
    res = runner.invoke(app, ["lab", "eval", "--list"])
    assert res.exit_code == 0 and "peer-neo4j-graphrag-hybrid" in res.output


def test_kgp_eval_default_is_the_path_a_user_gets(eval_graph, cli_env, tmp_path, monkeypatch):
    """`--strategy default` runs retrieve.strategy with retrieve.select, whatever --select says:
    its numbers equal that strategy's under that selection, and the report names the path."""
    from typer.testing import CliRunner

    from kg_platform.cli.main import app
    from kg_platform.config import get_settings

    monkeypatch.setenv("KGP_RETRIEVE__STRATEGY", "vector")
    monkeypatch.setenv("KGP_RETRIEVE__SELECT", "late")
    get_settings.cache_clear()
    common = ["--dataset", str(HOTPOT), "--budget-tokens", "150", "--limit", "3"]
    common += ["--corpus", "test-hotpot", "--no-ingest", "--quiet"]
    default_json, late_json = tmp_path / "d.json", tmp_path / "l.json"
    runner = CliRunner()
    res = runner.invoke(
        app, ["lab", "eval", *common, "-s", "default,vector", "--json", str(default_json)]
    )
    assert res.exit_code == 0, res.output + repr(res.exception)
    res = runner.invoke(
        app,
        ["lab", "eval", *common, "-s", "vector", "--select", "late", "--json", str(late_json)],
    )
    assert res.exit_code == 0, res.output + repr(res.exception)
    default = json.loads(default_json.read_text())["strategies"]
    late = json.loads(late_json.read_text())["strategies"]["vector"]
    assert default["default"]["path"] == "vector + late"
    assert default["default"]["paragraph_recall"] == late["paragraph_recall"]
    assert default["default"]["mrr"] == late["mrr"]
    # the plain `vector` run of the same report had no selection: a different ranking
    assert "path" not in default["vector"]
