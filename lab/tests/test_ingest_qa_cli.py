"""``kgp lab ingest-qa``: a QA file's paragraphs land through the product's ingestion run."""

from __future__ import annotations

import pytest

from tests.support.data import DEV

pytestmark = pytest.mark.integration


def test_kgp_lab_ingest_qa_exit_code_0(cli_env):
    from typer.testing import CliRunner

    from kg_platform.cli.main import app

    res = CliRunner().invoke(
        app,
        [
            "lab",
            "ingest-qa",
            str(DEV / "2wikimultihopqa.jsonl"),
            "--corpus",
            "t-ingest-cli-qa",
            "--limit",
            "1",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "added" in res.output and "[completed]" in res.output
