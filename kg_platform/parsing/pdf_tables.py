"""PDF tables: ruled tables (PyMuPDF's ``find_tables``, line strategy) and tables without
ruling lines found from text alignment, each rendered as Markdown with one row per visual row.
"""

from __future__ import annotations

import inspect
import math
import re
from collections import defaultdict
from functools import lru_cache
from typing import Any

from kg_platform.parsing.pdf_layout import _RTL_LETTER, _WS, _inside, _union, clean_text, is_rtl

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
    text = "<br>".join(_line_words(ws) for ws in ordered)
    return clean_text(text.replace("|", "\\|"))


def _line_words(words: list[tuple]) -> str:
    """The words of one line in reading order: right to left for Hebrew or Arabic script."""
    ordered = sorted(words, key=lambda w: w[0])
    if not is_rtl([w[4] for w in words]):
        return " ".join(w[4] for w in ordered)
    out: list[str] = []  # right to left, but a run of numbers or Latin words reads left to right
    run: list[str] = []
    for w in reversed(ordered):
        if _RTL_LETTER.search(w[4]):
            out.extend(reversed(run))
            run = []
            out.append(w[4])
        else:
            run.append(w[4])
    out.extend(reversed(run))
    return " ".join(out)


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
    if len(columns) < 2 or not _relates(rows):
        return None
    return markdown_table(rows)


def _relates(rows: list[list[str]]) -> bool:
    """A table relates values across its columns: at least two rows with two or more filled
    cells. Ruled boxes of a diagram or a page layout (one text per box) are not tables."""
    return len(rows) >= 2 and sum(1 for row in rows if sum(1 for c in row if c) >= 2) >= 2


def markdown_table(rows: list[list[str]]) -> str:
    """Rows of cell texts as a Markdown table, the first row as its header."""
    ncols = max(len(row) for row in rows)
    rows = [row + [""] * (ncols - len(row)) for row in rows]
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


# -- tables without ruling lines: tables of contents and indexes ---------------------------------
# a title, dot leaders, then a page number or range ("Preface . . . . xi", "Roles .... 8-10")
_LEADER = re.compile(
    r"^(?P<title>.*?[^\s.])\s*(?:\.\s*){4,}(?P<page>[\divxlcIVXLC]{1,6}(?:\s*[-–,]\s*\d{1,5})*)$"
)
MIN_LEADER_ROWS = 3  # a table of contents has at least this many leader lines


def _line_text(line: dict[str, Any]) -> str:
    return _WS.sub(" ", "".join(s["text"] for s in line["spans"])).strip()


def leader_tables(
    blocks: list[dict[str, Any]], box: Any
) -> tuple[list[tuple[str, tuple[float, float, float, float]]], list[dict[str, Any]]]:
    """Tables of contents and indexes: runs of at least three lines "title . . . page" become a
    two-column table (title | page), a title wrapped onto the line before its leader line kept
    in its row. Returns the tables (Markdown, box) and the blocks without the lines used."""
    lines = [
        (bi, li, line)
        for bi, block in enumerate(blocks)
        if block.get("type") == 0
        for li, line in enumerate(block.get("lines", ()))
        if _line_text(line)
    ]
    lines.sort(key=lambda t: (round(t[2]["bbox"][1]), t[2]["bbox"][0]))
    runs: list[list[tuple[int, int, dict[str, Any], re.Match[str] | None]]] = []
    current: list[tuple[int, int, dict[str, Any], re.Match[str] | None]] = []
    pending: list[tuple[int, int, dict[str, Any], re.Match[str] | None]] = []
    for bi, li, line in lines:
        m = _LEADER.match(_line_text(line))
        if m:
            current.extend(pending)
            pending = []
            current.append((bi, li, line, m))
        elif current and not pending and len(_line_text(line).split()) <= 20:
            pending.append((bi, li, line, None))  # a title wrapped before its leader line
        else:
            if current:
                runs.append(current)
            current, pending = [], []
    if current:
        runs.append(current)
    tables: list[tuple[str, tuple[float, float, float, float]]] = []
    used: set[tuple[int, int]] = set()
    for run in runs:
        if sum(1 for t in run if t[3]) < MIN_LEADER_ROWS:
            continue
        rows: list[list[str]] = []
        carry: list[str] = []
        bbox: tuple[float, float, float, float] | None = None
        for bi, li, line, m in run:
            used.add((bi, li))
            b = tuple(box(line["bbox"]))
            bbox = b if bbox is None else _union(bbox, b)  # type: ignore[arg-type]
            if m is None:
                carry.append(_line_text(line))
                continue
            title = clean_text(" ".join([*carry, m.group("title")]))
            rows.append([title.replace("|", "\\|"), m.group("page")])
            carry = []
        if bbox is not None:
            tables.append((markdown_table(rows), bbox))
    if not used:
        return [], blocks
    kept: list[dict[str, Any]] = []
    for bi, block in enumerate(blocks):
        if block.get("type") != 0:
            kept.append(block)
            continue
        rest = [ln for li, ln in enumerate(block.get("lines", ())) if (bi, li) not in used]
        kept.extend(_with_lines(block, rest))
    return tables, kept


def _with_lines(block: dict[str, Any], rest: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``block`` as it stays once some of its lines went into a table: whole when none did,
    nothing when all did, else its ``rest`` lines under the box that bounds them."""
    if len(rest) == len(block.get("lines", ())):
        return [block]
    if not rest:
        return []
    bbox = tuple(rest[0]["bbox"])
    for ln in rest[1:]:
        bbox = _union(bbox, tuple(ln["bbox"]))
    return [{**block, "lines": rest, "bbox": bbox}]


# -- tables without ruling lines: columns of aligned text ---------------------------------------
ALIGNED_MIN_ROWS = 3  # rows that share the table's full set of columns
GAP_HEIGHTS = 1.0  # a gap wider than this many line heights separates two cells of a row
MAX_CELL_WORDS = 4  # median words per cell: above this the "columns" are prose side by side
ROW_GAP_HEIGHTS = 2.5  # a vertical gap wider than this many line heights ends the table


def _segments(line: list[tuple], gap: float) -> list[list[tuple]]:
    """The words of one visual line cut where the space between two words is wider than gap."""
    segs: list[list[tuple]] = []
    for w in sorted(line, key=lambda w: w[0]):
        if segs and w[0] - segs[-1][-1][2] <= gap:
            segs[-1].append(w)
        else:
            segs.append([w])
    return segs


def _components(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[list[float]] = []
    for x0, x1 in sorted(intervals):
        if out and x0 <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], x1)
        else:
            out.append([x0, x1])
    return [(a, b) for a, b in out]


def _aligned_table(run: list[list[list[tuple]]]) -> tuple[list[list[str]], list[tuple]] | None:
    """Rows of cells for a run of segmented lines, or None when the lines do not share columns."""
    counts = [len(segs) for segs in run if len(segs) >= 2]
    if len(counts) < ALIGNED_MIN_ROWS:
        return None
    k = max(set(counts), key=lambda c: (counts.count(c), c))
    full = [segs for segs in run if len(segs) == k]
    if len(full) < ALIGNED_MIN_ROWS or 2 * len(full) < len(counts):
        return None
    cols = _components([(s[0][0], s[-1][2]) for segs in full for s in segs])
    if len(cols) != k:
        return None  # the segments of the full rows do not line up into k columns
    sizes = sorted(len(s) for segs in run for s in segs)
    if sizes[len(sizes) // 2] > MAX_CELL_WORDS:
        return None
    rows: list[list[str]] = []
    used: list[tuple] = []
    for i, segs in enumerate(run):  # a one-cell line across columns is text after the table
        if len(segs) == 1 and _crosses(segs[0], cols):
            run = run[:i]
            break
    while run and len(run[-1]) == 1 and _column(run[-1][0], cols) == 0:
        run = run[:-1]  # a line after the table starting in its first column is not a cell
    for segs in run:
        row = [""] * k
        for s in segs:
            c = _column(s, cols)
            text = _line_words(s)
            row[c] = f"{row[c]} {text}".strip()
            used.extend(s)
        if len(segs) == 1 and rows:  # a wrapped cell continues the row above
            c = next(j for j, cell in enumerate(row) if cell)
            rows[-1][c] = f"{rows[-1][c]} {row[c]}".strip()
        else:
            rows.append(row)
    return rows, used


def _crosses(seg: list[tuple], cols: list[tuple[float, float]]) -> bool:
    x0, x1 = seg[0][0], seg[-1][2]
    return sum(1 for a, b in cols if min(x1, b) > max(x0, a)) > 1


def _column(seg: list[tuple], cols: list[tuple[float, float]]) -> int:
    x0, x1 = seg[0][0], seg[-1][2]
    return max(range(len(cols)), key=lambda j: min(x1, cols[j][1]) - max(x0, cols[j][0]))


def aligned_tables(
    words: list[tuple], taken: list[tuple[float, float, float, float]]
) -> list[tuple[str, tuple[float, float, float, float]]]:
    """Tables without ruling lines, from text alignment (in the spirit of pdfplumber's text
    strategy): at least three consecutive lines cut by wide gaps into the same columns, with
    short cells (prose set in two columns has long ones). Words inside ``taken`` (tables found
    otherwise) are left out. Returns (Markdown, box) per table."""
    free = [
        w for w in words if not any(_inside((w[0] + w[2]) / 2, (w[1] + w[3]) / 2, t) for t in taken)
    ]
    lines = _visual_lines(free)
    if len(lines) < ALIGNED_MIN_ROWS:
        return []
    heights = sorted(w[3] - w[1] for w in free)
    height = max(heights[len(heights) // 2], 1.0)
    runs: list[list[list[list[tuple]]]] = []
    current: list[list[list[tuple]]] = []
    pending: list[list[list[tuple]]] = []  # one-cell lines: a cell wrapped onto its own line
    last_bottom = -math.inf
    for line in lines:
        segs = _segments(line, GAP_HEIGHTS * height)
        top = min(w[1] for w in line)
        near = bool(current) and top - last_bottom <= ROW_GAP_HEIGHTS * height
        if len(segs) >= 2 and (near or not current):
            current.extend(pending)
            pending = []
            current.append(segs)
        elif len(segs) == 1 and near and len(pending) < 2:
            pending.append(segs)
        else:
            current.extend(pending[:1])
            runs.append(current)
            current, pending = ([segs] if len(segs) >= 2 else []), []
        last_bottom = max(w[3] for w in line)
    runs.append(current + pending[:1])
    tables = []
    for run in runs:
        while run and len(run[0]) < 2:
            run = run[1:]
        found = _aligned_table(run) if run else None
        if found is None:
            continue
        rows, used = found
        if not _relates(rows):
            continue
        bbox = (
            min(w[0] for w in used),
            min(w[1] for w in used),
            max(w[2] for w in used),
            max(w[3] for w in used),
        )
        cells = [[clean_text(c.replace("|", "\\|")) for c in row] for row in rows]
        tables.append((markdown_table(cells), bbox))
    return tables


def drop_lines_inside(
    blocks: list[dict[str, Any]], boxes: list[tuple[float, float, float, float]], box: Any
) -> list[dict[str, Any]]:
    """The blocks without their text lines whose centre lies in one of ``boxes``."""
    if not boxes:
        return blocks
    kept: list[dict[str, Any]] = []
    for block in blocks:
        if block.get("type") != 0:
            kept.append(block)
            continue
        rest = []
        for ln in block.get("lines", ()):
            b = tuple(box(ln["bbox"]))
            if not any(_inside((b[0] + b[2]) / 2, (b[1] + b[3]) / 2, t) for t in boxes):
                rest.append(ln)
        kept.extend(_with_lines(block, rest))
    return kept
