"""`kgp lab eval` on a document-QA folder (two longdoc papers) against the real Neo4j: the papers go
through the document path, every scoped result comes from the question's own paper, evidence
metrics are in the report, and retrieving a whole paper finds all of its evidence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kg_platform_lab.evaluation.docqa import load_docqa
from kg_platform_lab.evaluation.harness import EvalConfig, _tokens, document_sources, run_evaluation
from kg_platform_lab.evaluation.metrics import Ranked
from kg_platform_lab.evaluation.report import validate_report

pytestmark = pytest.mark.integration

LONGDOC = Path("/work/shared/bench/longdoc")
CORPUS = "docqa-test"
STRATEGIES = ["bm25", "vector", "mogg", "propagate"]


@pytest.fixture(scope="module")
def slice_dir(tmp_path_factory) -> Path:
    """The first two papers of longdoc that have questions, with their questions."""
    if not (LONGDOC / "questions.jsonl").exists():
        pytest.skip("the shared longdoc bench is not mounted")
    rows = [json.loads(x) for x in (LONGDOC / "questions.jsonl").read_text().splitlines() if x]
    docs = list(dict.fromkeys(r["doc_id"] for r in rows))[:2]
    out = tmp_path_factory.mktemp("longdoc-slice")
    (out / "papers").mkdir()
    for d in docs:
        (out / "papers" / f"{d}.md").write_text((LONGDOC / "papers" / f"{d}.md").read_text())
    (out / "questions.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows if r["doc_id"] in docs)
    )
    return out


@pytest.fixture(scope="module")
def scoped(slice_dir, graph_session, embedder, settings):
    cfg = EvalConfig(dataset=slice_dir, strategies=STRATEGIES, budget_tokens=512, corpus=CORPUS)
    return run_evaluation(cfg, graph_session, embedder, settings)


def test_document_qa_report_has_evidence_metrics(scoped) -> None:
    report = scoped.to_json()
    assert validate_report(report) == []
    assert report["scope"] == "document" and report["skipped_missing_document"] == 0
    assert report["ingest"]["added"] == 2
    assert report["questions"] == len(scoped.examples) > 2
    for name in STRATEGIES:
        block = report["strategies"][name]
        assert block["errors"] == 0 and block["n"] == len(scoped.examples)
        assert 0.0 <= block["evidence_recall"] <= 1.0
        assert 0.0 <= block["evidence_token_coverage"] <= 1.0
        assert 0 < block["context_tokens"] <= 512
        assert "evidence_recall" in block["curve"][-1]
        # split by the gold paragraphs a question needs: the parts add up to the whole
        parts = block["evidence_recall_by_gold_paragraphs"]
        assert set(parts) <= {"1", "2", "3+"} and sum(p["n"] for p in parts.values()) == block["n"]
        total = sum(p["n"] * p["evidence_recall"] for p in parts.values()) / block["n"]
        assert total == pytest.approx(block["evidence_recall"])
    # the question's own paper, 512 tokens: lexical search must find some evidence
    assert report["strategies"]["bm25"]["evidence_recall"] > 0.2


def test_scoped_results_come_from_the_questions_paper(scoped, graph_session) -> None:
    sources = document_sources(graph_session, CORPUS, scoped.examples)
    for name, run in scoped.runs.items():
        for ex, ranking in zip(scoped.examples, run.rankings):
            assert ranking, f"{name} returned nothing for {ex.id}"
            ids = [r.id for r in ranking]
            rows = graph_session.read_raw(
                "UNWIND $ids AS id OPTIONAL MATCH (c:Chunk {id: id}) OPTIONAL MATCH (p:Piece {id: id}) "
                "RETURN coalesce(c.source_id, p.source_id) AS src",
                ids=ids,
            )
            assert {r["src"] for r in rows} <= set(sources[ex.doc_id]), (name, ex.id)


def test_a_whole_paper_holds_all_its_evidence(scoped, graph_session) -> None:
    """Upper bound: every level-1 chunk of the paper as context finds the gold paragraphs, so
    ingestion keeps the text the metric looks for."""
    sources = document_sources(graph_session, CORPUS, scoped.examples)
    for ex in load_docqa(scoped.config.dataset):
        rows = graph_session.read_raw(
            "MATCH (c:L1) WHERE c.source_id IN $s RETURN c.id AS id, c.text AS text",
            s=sources[ex.doc_id],
        )
        score = ex.score([Ranked(r["id"], r["text"]) for r in rows], _tokens)
        assert score.evidence_recall == 1.0, ex.id


def test_corpus_scope_pools_both_papers(
    scoped, slice_dir, graph_session, embedder, settings
) -> None:
    cfg = EvalConfig(
        dataset=slice_dir,
        strategies=["bm25"],
        budget_tokens=512,
        corpus=CORPUS,
        scope="corpus",
        ingest=False,
        limit=3,
    )
    pooled = run_evaluation(cfg, graph_session, embedder, settings).to_json()
    assert pooled["scope"] == "corpus" and pooled["strategies"]["bm25"]["n"] == 3
    with pytest.raises(Exception, match="--scope must be one of"):
        EvalConfig(dataset=slice_dir, strategies=["bm25"], scope="paragraph")


def test_held_out_leaves_out_listed_questions_and_documents(
    scoped, slice_dir, graph_session, embedder, settings, tmp_path
) -> None:
    examples = scoped.examples
    first, docs = examples[0], sorted({ex.doc_id for ex in examples})
    other_doc = next(d for d in docs if d != first.doc_id)
    listed = tmp_path / "trained.txt"
    listed.write_text(f"# seen in training\n{first.id}\n\n{other_doc}  # a whole paper\n")
    cfg = EvalConfig(
        dataset=slice_dir,
        strategies=["bm25"],
        budget_tokens=512,
        corpus=CORPUS,
        ingest=False,
        held_out=listed,
    )
    report = run_evaluation(cfg, graph_session, embedder, settings).to_json()
    expected = [ex for ex in examples if ex.id != first.id and ex.doc_id != other_doc]
    assert report["strategies"]["bm25"]["n"] == len(expected) > 0
    assert report["excluded_trained"] == len(examples) - len(expected)
    assert report["held_out"] == str(listed)
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n")
    with pytest.raises(Exception, match="holds no ids"):
        run_evaluation(
            EvalConfig(dataset=slice_dir, strategies=["bm25"], corpus=CORPUS, held_out=empty),
            graph_session,
            embedder,
            settings,
        )


def test_shipped_trained_id_list_names_longdoc_questions() -> None:
    from kg_platform_lab.evaluation.harness import read_id_list

    shipped = Path(__file__).resolve().parents[2] / (
        "lab/results/2026-11-24/default-routers/longdoc-trained-ids.txt"
    )
    ids = read_id_list(shipped)
    known = {q.id for q in load_docqa(LONGDOC)} if LONGDOC.exists() else ids
    assert len(ids) == 81 and ids <= known
