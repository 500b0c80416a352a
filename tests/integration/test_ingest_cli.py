"""``kgp ingest``: JSON lines for jobs and the 0/1/2 exit-code contract."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.integration


def _lines(output: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


def test_kgp_ingest_json_lines_and_exit_code_1_on_a_bad_file(cli_env, tmp_path):
    from typer.testing import CliRunner

    from kg_platform.cli.main import app
    from kg_platform.ingest.writer import drop_corpus

    drop_corpus(cli_env, "t-ingest-cli")
    (tmp_path / "note.md").write_text(
        "# Note\n\nThe platypus lays eggs. It lives in Australia.\n", encoding="utf-8"
    )
    (tmp_path / "bad.weird").write_text("???", encoding="utf-8")
    res = CliRunner().invoke(app, ["ingest", str(tmp_path), "--corpus", "t-ingest-cli", "--json"])
    assert res.exit_code == 1, res.output
    events = _lines(res.output)
    by_status = {e.get("status"): e for e in events if e.get("event") == "source"}
    assert by_status["added"]["uri"].endswith("note.md")
    assert by_status["error"]["error"]["error"] == "UnsupportedFormat"
    report = events[-1]
    assert report["event"] == "report" and report["status"] == "completed_with_errors"
    res = CliRunner().invoke(
        app, ["ingest", str(tmp_path / "note.md"), "--corpus", "t-ingest-cli", "--json"]
    )
    assert res.exit_code == 0 and _lines(res.output)[-1]["skipped"] == [str(tmp_path / "note.md")]
