"""``kgp lab eval-parsing``: documents scored against a reference Markdown, on a small synthetic
pair whose every measure can be worked out by hand."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kg_platform_lab.evaluation.parsing import (
    compare,
    evaluate,
    flatten,
    lis_length,
    reference_tree,
    table_rows,
    words,
)

REFERENCE = """\
# Annual report

The company grew in every region this year and hired new staff.

## Sales by state

| State | Checks | Permits |
|---|---|---|
| Texas | 21,550 | 9,509 |
| Utah | 3,100 | 1,200 |

## Outlook

Next year the company expects steady growth in all regions.
"""

# the same document as a parser might return it: one heading lost, the table's rows merged
# into one row (five states in a cell), one word added, the last two blocks swapped
CANDIDATE = """\
# Annual report

Next year the company expects steady growth in all regions.

The company grew in every region this year and hired new staff today.

| State | Checks | Permits |
|---|---|---|
| Texas<br>Utah | 21,550<br>3,100 | 9,509<br>1,200 |
"""

HTML = """<html><head><title>Annual report</title></head><body>
<h1>Annual report</h1>
<p>The company grew in every region this year and hired new staff.</p>
<h2>Sales by state</h2>
<table><tr><th>State</th><th>Checks</th><th>Permits</th></tr>
<tr><td>Texas</td><td>21,550</td><td>9,509</td></tr>
<tr><td>Utah</td><td>3,100</td><td>1,200</td></tr></table>
<h2>Outlook</h2>
<p>Next year the company expects steady growth in all regions.</p>
</body></html>
"""


def test_words_strip_markup_but_keep_ligatures_and_hyphen_parts_distinct():
    assert words("**Bold** [anchor](http://x) <br> ![alt](a.png) <!-- image -->") == [
        "bold",
        "anchor",
        "alt",
    ]
    assert words("ﬁnd appoint-ments") == ["ﬁnd", "appoint", "ments"]  # not folded to "find"


def test_table_rows_split_cells_and_drop_the_delimiter():
    rows = table_rows("| a | b \\| c |\n|---|---|\n| **1** | 2<br>3 |")
    assert rows == [["a", "b c"], ["1", "2 3"]]


def test_lis_length():
    assert lis_length([0, 5, 2, 3, 9]) == 4
    assert lis_length([]) == 0


def test_every_measure_on_a_hand_checked_pair():
    ref = flatten(reference_tree(REFERENCE))
    cand = flatten(reference_tree(CANDIDATE))
    scores = compare(ref, cand)
    # words: the candidate lacks "sales by state" and "outlook" (4 words), adds "today"
    n_ref = len(ref.tokens)
    assert scores["text_recall"] == (n_ref - 4) / n_ref
    assert scores["text_precision"] == (n_ref - 4) / (n_ref - 4 + 1)
    assert scores["heading_recall"] == 1 / 3
    assert scores["heading_precision"] == 1.0
    # cells: reference 9 (3 header + 6), candidate 3 header + 3 merged cells; 3 match
    assert scores["table_cell_f1"] == 2 * 3 / (9 + 6)
    # rows of two or more cells: header kept, Texas and Utah rows lost
    assert scores["rows_kept_whole"] == 1 / 3
    # blocks of 4+ words located by their first words: para 1 and para 2 (the merged table's
    # first words differ); the candidate swaps them, so one of the two is in order
    assert scores["reading_order"] == 0.5


def test_identical_parse_scores_one_and_undefined_measures_are_none():
    ref = flatten(reference_tree("# Title\n\nJust one paragraph of plain words here.\n"))
    scores = compare(ref, ref)
    assert scores["text_recall"] == scores["text_precision"] == 1.0
    assert scores["heading_recall"] == scores["heading_precision"] == 1.0
    assert scores["table_cell_f1"] is None and scores["rows_kept_whole"] is None


def _dataset(tmp_path: Path) -> Path:
    (tmp_path / "html" / "groundtruth").mkdir(parents=True)
    (tmp_path / "html" / "report.html").write_text(HTML, encoding="utf-8")
    (tmp_path / "html" / "groundtruth" / "report.html.md").write_text(REFERENCE, encoding="utf-8")
    (tmp_path / "docx" / "groundtruth").mkdir(parents=True)
    (tmp_path / "docx" / "broken.docx").write_bytes(b"PK\x03\x04 not really a zip")
    (tmp_path / "docx" / "groundtruth" / "broken.docx.md").write_text(REFERENCE, encoding="utf-8")
    return tmp_path


def test_evaluate_parses_each_document_and_a_refused_one_scores_zero(tmp_path):
    report = evaluate(_dataset(tmp_path))
    by_file = {d.file: d for d in report.documents}
    html = by_file["report.html"]
    assert html.error is None
    assert html.scores["text_recall"] == 1.0 and html.scores["heading_recall"] == 1.0
    assert html.scores["table_cell_f1"] == 1.0 and html.scores["rows_kept_whole"] == 1.0
    broken = by_file["broken.docx"]
    assert broken.error and broken.error.startswith("CorruptDocument")
    assert broken.scores["text_recall"] == 0.0 and broken.scores["reading_order"] == 0.0
    medians = report.medians()
    assert medians["docx"]["refused"] == 1 and medians["html"]["text_recall"] == 1.0


def test_cli_writes_the_per_document_json_and_prints_the_format_table(tmp_path):
    from kg_platform.cli.main import app

    out = tmp_path / "out" / "parsing.json"
    result = CliRunner().invoke(
        app, ["lab", "eval-parsing", "--dataset", str(_dataset(tmp_path)), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "| html | 1 | 0 | 1.00 |" in result.output
    data = json.loads(out.read_text(encoding="utf-8"))
    assert {d["file"] for d in data["documents"]} == {"report.html", "broken.docx"}
    assert data["medians"]["docx"]["refused"] == 1
