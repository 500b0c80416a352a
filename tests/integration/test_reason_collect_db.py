"""``kgp lab decomposer collect``: Algorithm 2 over the real atomic-question index with the scripted
LLM, stored ``(:Trajectory {kind: 'collect'})`` runs, and the Algorithm 3 SFT JSONL."""

from __future__ import annotations

import json

import pytest

from support.fake_openai import fake_llm  # noqa: F401
from test_reason_ask import CORPUS, QUESTION, Script, j, kb  # noqa: F401

pytestmark = pytest.mark.integration


def test_collect_cli_stores_runs_and_writes_sft_examples(
    kb, settings, fake_llm, tmp_path, monkeypatch
):
    from typer.testing import CliRunner

    from kg_platform.cli.main import app
    from kg_platform.config import get_settings

    script = Script(
        propose=[
            j(thinking="", sub_questions=["Who directed Sweetgrass?"]),
            j(thinking="", sub_questions=["Where was Lucien Castaing-Taylor born?"]),
            j(thinking="", sub_questions=[]),
        ],
        select=[j(thinking="", question_idx=1), j(thinking="", question_idx=1)],
        # the run's answer, then a_1 and a_2 for the SFT pairs
        answer=[
            j(rationale="", answer="Liverpool"),
            j(rationale="", answer="Lucien Castaing-Taylor and Ilisa Barbash"),
            j(rationale="", answer="Liverpool"),
        ],
    )
    fake_llm.responder = script
    data = tmp_path / "qa.jsonl"
    data.write_text(
        json.dumps({"id": "q1", "question": QUESTION, "answer": "Liverpool", "answer_aliases": []})
        + "\n"
    )
    out = tmp_path / "sft.jsonl"
    env = {
        "NEO4J_URI": settings.neo4j.uri,
        "NEO4J_PASSWORD": settings.neo4j.password.get_secret_value(),
        "KGP_LLM__BASE_URL": fake_llm.base_url,
        "KGP_LLM__MODEL": "fake-model",
        "KGP_LLM__API_KEY": "test",
        "KGP_LLM__CACHE": "false",
        "KGP_CACHE_DIR": str(tmp_path / "cache"),
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    get_settings.cache_clear()
    try:
        res = CliRunner().invoke(
            app,
            [
                "lab",
                "decomposer",
                "collect",
                "--dataset",
                str(data),
                "--out",
                str(out),
                "--corpus",
                CORPUS,
            ],
        )
    finally:
        get_settings.cache_clear()
    assert res.exit_code == 0, res.output
    assert "1 questions, 1 solved (100%) in 1 runs; 3 SFT examples" in res.output
    assert script.order == [
        "propose",
        "select",
        "propose",
        "select",
        "propose",
        "answer",
        "answer",
        "answer",
    ]

    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [x["completion"] for x in lines] == [
        "<decompose>True</decompose><sub-question>Who directed the documentary film "
        "Sweetgrass?</sub-question>",
        "<decompose>True</decompose><sub-question>Where was Lucien Castaing-Taylor "
        "born?</sub-question>",
        "<decompose>False</decompose>",
    ]
    assert "Lucien Castaing-Taylor and Ilisa Barbash" in lines[1]["prompt"]

    rows = kb.read_raw(
        "MATCH (t:Trajectory {kind: 'collect'}) "
        "OPTIONAL MATCH (t)-[r:CHOSE]->(c:Chunk) "
        "WITH t, c ORDER BY r.round "
        "RETURN t.score AS score, t.question_id AS qid, t.stop_reason AS stop, "
        "collect(c.id) AS chunks"
    )
    assert len(rows) == 1
    assert rows[0]["score"] == 1.0 and rows[0]["qid"] == "q1"
    assert rows[0]["stop"] == "context_sufficient" and rows[0]["chunks"] == ["c1-0", "c1-1"]
