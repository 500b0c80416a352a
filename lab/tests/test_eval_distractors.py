"""``kgp lab eval --distractors``: a passage JSONL added to the pooled corpus, without the
passages already in it (by doc_id, or by title and text whatever the spacing)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support.data import DEV

from kg_platform.errors import EvaluationError
from kg_platform_lab.evaluation.harness import EvalConfig
from kg_platform_lab.qa_ingest import read_distractors, read_questions

WIKI = DEV / "2wikimultihopqa.jsonl"
DISTRACTORS = DEV.parent / "distractors" / "2wikimultihopqa-hipporag2.jsonl"


def _slice(tmp_path: Path, question: dict, extra: int = 3) -> tuple[Path, int]:
    """A distractor file: `extra` real distractors, then one question paragraph under its own
    doc_id, one under another doc_id with other spacing, and a repeat of the first line."""
    lines = []
    with DISTRACTORS.open(encoding="utf-8") as fh:
        for _, line in zip(range(extra), fh):
            lines.append(line.strip())
    para = question["paragraphs"][0]
    twin = {
        "doc_id": para["doc_id"],
        "dataset": "2wikimultihopqa",
        "title": para["title"],
        "text": " ".join(para["sentences"]),
        "sentences": para["sentences"],
    }
    spaced = dict(twin, doc_id="2wikimultihopqa:0000000000000000")
    spaced["text"] = "  ".join(s.replace(" ", "  ") for s in para["sentences"])
    lines += [json.dumps(twin), json.dumps(spaced), lines[0]]
    path = tmp_path / "slice.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, extra


def test_passages_already_present_are_skipped(tmp_path):
    question = next(read_questions(WIKI, 1))
    present = {p["doc_id"]: ("2wikimultihopqa", p) for p in question["paragraphs"]}
    path, extra = _slice(tmp_path, question)
    added, skipped = read_distractors(path, present)
    assert len(added) == extra and skipped == 3
    assert {p["doc_id"] for _, p in added}.isdisjoint(present)


def test_a_bad_distractor_file_is_refused_with_a_hint(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"title": "no id"}\n', encoding="utf-8")
    with pytest.raises(EvaluationError) as err:
        read_distractors(bad, {})
    assert "needs doc_id" in str(err.value) and err.value.hint
    with pytest.raises(EvaluationError):
        read_distractors(tmp_path / "missing.jsonl", {})


def test_the_passage_cut_keeps_the_first_five_distinct_passages():
    from kg_platform.retrieval.base import RetrievedItem
    from kg_platform_lab.evaluation.harness import first_passages

    items = [
        RetrievedItem(id=f"c{i}", text="", score=1.0, source_id=s)
        for i, s in enumerate(["a", "a", "b", None, "c", "b", "d", "e", "f"])
    ]
    assert first_passages(items) == ["a", "b", "c3", "c", "d"]


def test_the_default_corpus_names_the_distractors():
    cfg = EvalConfig(dataset=WIKI, strategies=["bm25"], distractors=DISTRACTORS)
    assert cfg.corpus == "qa-2wikimultihopqa+2wikimultihopqa-hipporag2"
    assert EvalConfig(dataset=WIKI, strategies=["bm25"]).corpus == "qa-2wikimultihopqa"


@pytest.mark.integration
def test_kgp_eval_adds_the_distractors(graph_session, cli_env, tmp_path):
    from typer.testing import CliRunner

    from kg_platform.cli.main import app
    from kg_platform.ingest.writer import drop_corpus

    question = next(read_questions(WIKI, 1))
    path, extra = _slice(tmp_path, question)
    corpus = "qa-2wikimultihopqa+slice"
    drop_corpus(graph_session, corpus)
    out = tmp_path / "r.json"
    args = ["lab", "eval", "--dataset", str(WIKI), "--strategy", "bm25", "--limit", "1"]
    args += ["--corpus-limit", "1", "--distractors", str(path), "--quiet", "--json", str(out)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output + repr(res.exception)
    report = json.loads(out.read_text())
    assert report["corpus"] == corpus and report["distractors"] == str(path)
    assert report["ingest"]["added"] == len({p["doc_id"] for p in question["paragraphs"]}) + extra
    block = report["strategies"]["bm25"]
    assert block["n"] == 1
    # k=5 items lie in at most 5 passages, which the passage cut reads whole
    assert block["recall_at_5_passages"] >= block["paragraph_recall"]
    assert block["all_found_at_5_passages"] >= block["all_supporting_found"]
    drop_corpus(graph_session, corpus)
