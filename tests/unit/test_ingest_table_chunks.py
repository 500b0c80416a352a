"""A table too long for one chunk is cut at row boundaries; each later part starts with the
table's header row, so a chunk of the table can be read (and retrieved) alone."""

from __future__ import annotations

from kg_platform.ingest.plan import SectionInput, Segment, SourceInput, plan_source
from kg_platform.segmenting.chunker import FixedChunker

HEADER = "| State / Territory | Permit | Handgun | Long Gun |"
DELIM = "|---|---|---|---|"
STATES = ["Alabama", "Alaska", "Arizona", "Arkansas", "California", "Colorado", "Texas", "Utah"]


def _plan(rows: list[str]):
    inp = SourceInput(
        corpus="t-tables",
        uri="mem://tables",
        title="Checks",
        mime="application/pdf",
        sha256="0" * 64,
        bytes=1,
        sections=[SectionInput("Checks", 0, "Checks", None, [Segment("table", rows, 1)])],
    )
    return plan_source(inp, FixedChunker(48), budget=48, levels=3, min_piece_tokens=12)


def test_every_part_of_a_long_table_starts_with_its_header_row() -> None:
    body = [
        f"| {s} | {1000 + k:,} | {20000 + 7 * k:,} | {30000 + 3 * k:,} |"
        for k, s in enumerate(STATES)
    ]
    plan = _plan([HEADER, DELIM, *body])
    parts = [c for c in plan.chunks if c.level == 1 and c.kind == "table"]
    assert len(parts) > 2  # the table was cut
    for part in parts:
        lines = part.text.splitlines()
        assert lines[:2] == [HEADER, DELIM]
        assert lines.count(HEADER) == 1
    kept = [ln for part in parts for ln in part.text.splitlines()[2:]]
    assert kept == body  # every row once, in order, after the header
    pieces = " ".join(p.text for p in plan.pieces)
    assert pieces.count("State / Territory") == 1  # pieces stay the rows themselves


def test_a_table_without_a_delimiter_row_is_cut_as_before() -> None:
    rows = [
        f"{s} had {k} checks in November, as the monthly report states."
        for k, s in enumerate(STATES)
    ]
    plan = _plan(rows)
    parts = [c for c in plan.chunks if c.level == 1 and c.kind == "table"]
    assert len(parts) > 1
    assert [ln for p in parts for ln in p.text.splitlines()] == rows
