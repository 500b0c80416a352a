"""``kgp lab eval`` through the real ingestion (``kgp lab ingest-qa``) on a paragraph-level dataset.

One MuSiQue question (20 paragraphs) is ingested by the harness, scored with paragraph-level gold
(a fact is covered when any sentence of its gold paragraph is returned), and a second run reuses
the unchanged corpus instead of writing it again.
"""

from __future__ import annotations

import json

import pytest
from tests.support.data import DEV

pytestmark = pytest.mark.integration


MUSIQUE = DEV / "musique.jsonl"
CORPUS = "test-eval-musique"


def test_kgp_eval_ingests_then_reuses_the_corpus(graph_session, cli_env, tmp_path):
    from typer.testing import CliRunner

    from kg_platform.cli.main import app
    from kg_platform_lab.evaluation.report import validate_report

    graph_session.write_raw(
        "MATCH (n) WHERE n.corpus = $c OR (n:Corpus AND n.name = $c) DETACH DELETE n", c=CORPUS
    )
    args = [
        "lab",
        "eval",
        "--dataset",
        str(MUSIQUE),
        "--strategy",
        "bm25,vector",
        "--limit",
        "1",
        "--corpus-limit",
        "1",
        "--corpus",
        CORPUS,
        "--quiet",
    ]
    first, second = tmp_path / "1.json", tmp_path / "2.json"
    res = CliRunner().invoke(app, [*args, "--json", str(first)])
    assert res.exit_code == 0, res.output + repr(res.exception)
    report = json.loads(first.read_text())
    assert validate_report(report) == []
    assert report["ingest"]["added"] == 20 and report["ingest"]["status"] == "completed"
    assert report["corpus_chunks"] > 0
    for block in report["strategies"].values():
        assert block["n"] == 1
        # 20 paragraphs, k=5, paragraph-level gold: each baseline finds a gold paragraph.
        assert block["paragraph_recall"] > 0 and block["mrr"] > 0

    res = CliRunner().invoke(app, [*args, "--json", str(second)])
    assert res.exit_code == 0, res.output + repr(res.exception)
    again = json.loads(second.read_text())
    assert again["ingest"]["added"] == 0 and again["ingest"]["skipped"] == 20
    for name, block in again["strategies"].items():
        for key in ("paragraph_recall", "sentence_recall", "mrr", "context_tokens"):
            assert block[key] == report["strategies"][name][key]
