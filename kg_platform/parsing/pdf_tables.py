"""PDF tables: ruled tables (PyMuPDF's ``find_tables``, line strategy) and tables without
ruling lines found from text alignment, each rendered as Markdown with one row per visual row.
"""

from __future__ import annotations

import inspect
import math
from collections import defaultdict
from functools import lru_cache
from typing import Any

from kg_platform.parsing.pdf_layout import _LIGATURES, _inside

MIN_RULES = 2  # a ruled table needs >= 2 horizontal and >= 2 vertical rules


@lru_cache(maxsize=1)
def _table_options(fitz: Any) -> dict[str, Any]:
    """PyMuPDF >= 2 gates tables through an ML layout model when ``pymupdf-layout`` is present
    (seconds per page on CPU); the classic line strategy is fast and deterministic."""
    find = fitz.table.find_tables
    return {"use_layout": False} if "use_layout" in inspect.signature(find).parameters else {}


# -- tables ------------------------------------------------------------------------------------
def _cell_text(words: list[tuple]) -> str:
    lines: dict[tuple[int, int], list[tuple]] = defaultdict(list)
    for w in words:
        lines[(w[5], w[6])].append(w)
    ordered = sorted(lines.values(), key=lambda ws: (round(min(w[1] for w in ws)), ws[0][0]))
    text = "<br>".join(" ".join(w[4] for w in sorted(ws, key=lambda w: w[0])) for ws in ordered)
    return text.replace("|", "\\|").translate(_LIGATURES)


def _visual_lines(words: list[tuple]) -> list[list[tuple]]:
    """Words grouped into text lines by their vertical centre (top to bottom)."""
    if not words:
        return []
    heights = sorted(w[3] - w[1] for w in words)
    tol = 0.5 * heights[len(heights) // 2]
    lines: list[list[tuple]] = []
    last = -math.inf
    for w in sorted(words, key=lambda w: (w[1] + w[3]) / 2):
        cy = (w[1] + w[3]) / 2
        if lines and cy - last <= tol:
            lines[-1].append(w)
        else:
            lines.append([w])
        last = cy
    return lines


def _split_visual_rows(cells: list[list[tuple]]) -> list[list[list[tuple]]]:
    """One ruled row holding several text lines that line up across most of its columns (rules
    every few records, as in shaded bands) is that many rows; a row where only some cells wrap
    stays one row."""
    lines = _visual_lines([w for cell in cells for w in cell])
    filled = sum(1 for cell in cells if cell)
    if len(lines) < 2 or filled < 2:
        return [cells]
    line_of = {id(w): k for k, line in enumerate(lines) for w in line}
    full = sum(1 for cell in cells if cell and len({line_of[id(w)] for w in cell}) == len(lines))
    if full < 2 or 2 * full <= filled:
        return [cells]
    return [[[w for w in cell if line_of[id(w)] == k] for cell in cells] for k in range(len(lines))]


def _table_columns(table_rows: list[Any], bbox: tuple[float, ...]) -> list[tuple[float, float]]:
    """The table's column slots: column k starts where any row has a cell in slot k and ends
    where slot k + 1 starts (a cell merged across slots in one row does not hide the slots the
    other rows have)."""
    ncols = max((len(row.cells) for row in table_rows), default=0)
    starts: list[float | None] = []
    for k in range(ncols):
        xs = [row.cells[k][0] for row in table_rows if k < len(row.cells) and row.cells[k]]
        starts.append(min(xs) if xs else None)
    known = [(k, x) for k, x in enumerate(starts) if x is not None]
    columns = []
    for i, (_, x0) in enumerate(known):
        x1 = known[i + 1][1] if i + 1 < len(known) else bbox[2]
        columns.append((x0, x1))
    return columns


def _table_markdown(table: Any, words: list[tuple]) -> str | None:
    """Render one detected table as Markdown (first row as header); None if it is not a table.

    Columns are the table's slots (a cell merged across columns in one row does not swallow
    the words of the columns it covers); each word goes to the ruled row and the column holding
    its centre, and a ruled row that holds several aligned text lines is split into one row per
    line."""
    bbox = tuple(table.bbox)
    inside = [w for w in words if _inside((w[0] + w[2]) / 2, (w[1] + w[3]) / 2, bbox)]
    table_rows = table.rows  # a property that is recomputed on every access
    columns = _table_columns(table_rows, bbox)
    if not columns:
        return None
    grid: list[list[list[tuple]]] = [[[] for _ in columns] for _ in table_rows]
    for w in inside:
        x, y = (w[0] + w[2]) / 2, (w[1] + w[3]) / 2
        for r, row in enumerate(table_rows):  # rows may overlap where cells span rows
            if row.bbox[1] - 1 <= y <= row.bbox[3] + 1:
                if sum(1 for cell in row.cells if cell is not None) == 1:
                    grid[r][0].append(w)  # one cell across the table: a caption row
                    break
                c = min(
                    range(len(columns)),
                    key=lambda k: (
                        0.0
                        if columns[k][0] - 1 <= x <= columns[k][1] + 1
                        else min(abs(x - columns[k][0]), abs(x - columns[k][1]))
                    ),
                )
                grid[r][c].append(w)
                break
    split = [part for cells in grid for part in _split_visual_rows(cells)]
    rows = [[_cell_text(cell) for cell in row] for row in split]
    rows = [row for row in rows if any(row)]
    filled = sum(1 for row in rows for cell in row if cell)
    if len(rows) < 2 or len(columns) < 2 or filled < 2:
        return None
    ncols = len(columns)
    out = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * ncols]
    out += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    return "\n".join(out)


def _has_grid(page: Any) -> bool:
    """Cheap test for ruling lines in both directions: the table finder costs ~0.5 s per page
    (it indexes every character), and pages without such lines cannot hold a ruled table."""
    horizontal = vertical = 0
    for path in page.get_cdrawings():
        for item in path.get("items", ()):
            if item[0] == "l":
                (x0, y0), (x1, y1) = item[1], item[2]
                w, h = abs(x1 - x0), abs(y1 - y0)
            elif item[0] == "re":
                x0, y0, x1, y1 = item[1]
                w, h = abs(x1 - x0), abs(y1 - y0)
                if w > 5 and h > 5:
                    horizontal += 2
                    vertical += 2
                    continue
            else:
                continue
            if h < 3 and w > 5:
                horizontal += 1
            elif w < 3 and h > 5:
                vertical += 1
        if horizontal >= MIN_RULES and vertical >= MIN_RULES:
            return True
    return False
