"""HTML tables made rectangular before Markdown conversion.

markitdown writes a cell once and ignores ``rowspan``/``colspan``, so the cells after a
vertically merged cell shift left and a row no longer reads with its own header. Here every
spanning cell is repeated in each slot it covers (the convention docling follows too), so every
row has one cell per column. Used for HTML pages and for DOCX (whose converter emits HTML).
"""

from __future__ import annotations

import copy
from typing import Any

MAX_SPAN = 1000  # a span beyond this is a broken attribute, not a layout


def _span(cell: Any, name: str) -> int:
    try:
        value = int(str(cell.get(name, "1")).strip() or 1)
    except ValueError:
        return 1
    return max(1, min(value, MAX_SPAN))


def _rows(table: Any) -> list[Any]:
    """The table's own rows (not those of tables nested in its cells)."""
    return [tr for tr in table.find_all("tr") if tr.find_parent("table") is table]


def _fill(pending: dict[int, tuple[Any, int]], out: list[Any], col: int) -> int:
    """Put the cells merged down from rows above at ``col`` and after; the next free column."""
    while col in pending:
        cell, left = pending[col]
        out.append(copy.copy(cell))
        if left <= 1:
            del pending[col]
        else:
            pending[col] = (cell, left - 1)
        col += 1
    return col


def expand_spans(root: Any) -> int:
    """Repeat every ``rowspan``/``colspan`` cell under ``root`` (a BeautifulSoup tree) into the
    slots it covers; returns how many cells were spanning."""
    spanning = 0
    for table in root.find_all("table"):
        pending: dict[int, tuple[Any, int]] = {}  # column -> (cell to repeat, rows left)
        for tr in _rows(table):
            cells = list(tr.find_all(["td", "th"], recursive=False))
            out: list[Any] = []
            col = _fill(pending, out, 0)
            for cell in cells:
                rows, cols = _span(cell, "rowspan"), _span(cell, "colspan")
                if rows > 1 or cols > 1:
                    spanning += 1
                for name in ("rowspan", "colspan"):
                    if name in cell.attrs:
                        del cell.attrs[name]
                for k in range(cols):
                    out.append(cell if k == 0 else copy.copy(cell))
                    if rows > 1:
                        pending[col] = (cell, rows - 1)
                    col += 1
                col = _fill(pending, out, col)
            while pending and max(pending) >= col:  # merged cells at the row's end
                col = _fill(pending, out, col) if col in pending else col + 1
            if spanning:
                for cell in cells:
                    cell.extract()
                for cell in out:
                    tr.append(cell)
    return spanning


__all__ = ["expand_spans"]
