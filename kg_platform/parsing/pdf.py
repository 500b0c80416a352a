"""PDF with PyMuPDF (optional extra ``pdf``: PyMuPDF is AGPL, the platform Apache-2.0).

Per page: text blocks with their fonts (``get_text("dict")``), ruled tables (``find_tables``
with its classic line strategy; rendered to Markdown and their area removed from the text),
figure captions ("Figure N" / "Fig. N" lines, with the labels printed inside the figure), and link
URIs. Then, over the whole document: running heads/footers and page numbers are dropped, blocks
are put in reading order (column by column, between full-width blocks, so two- and three-column
pages read down each column), and headings come from the outline (``get_toc``) or, when there is
none, from font size, weight and section numbering relative to the body text (a bold or italic
first line is split from its paragraph as a run-in heading; three same-styled candidates in a row
are a list or a cover page, not headings). Ligatures are expanded and words broken at a line end
are joined (with their hyphen when the document writes them so elsewhere). A ruled table keeps
one row per visual row. Every block carries its page number.
"""

from __future__ import annotations

import inspect
import math
import re
import unicodedata
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from kg_platform.errors import (
    CorruptDocument,
    EmptyDocument,
    EncryptedDocument,
    NeedsOCR,
    UnsupportedFormat,
)
from kg_platform.parsing._files import RawFile
from kg_platform.parsing._tree import TreeBuilder
from kg_platform.parsing.model import ParsedDocument

MIME = "application/pdf"
TAIL_BYTES = 4096  # a complete PDF ends with %%EOF within its last bytes
MIN_RULES = 2  # a ruled table needs >= 2 horizontal and >= 2 vertical rules
WIDE_FRACTION = 0.6  # a block wider than this share of the text area spans the columns
MARGIN_FRACTION = 0.1  # top/bottom band where running heads and page numbers live

_CAPTION = re.compile(r"^\s*(Figure|Fig\.?)\s*\d+[\w.\-–]*", re.IGNORECASE)
# "Figure 3." / "Fig. 2:" / "Figure 7-26.": a number then punctuation ("Figure 3 shows" is prose)
_CAPTION_STRICT = re.compile(
    r"^\s*(Figure|Fig\.?)\s*\d+(?:[.\-–]\d+)*[a-z]?\s*[.:|—–-]", re.IGNORECASE
)
_BULLET = re.compile(r"^\s*([•◦▪●‣∙·\-–*]|\(?\d{1,3}[.)]|\(?[a-z][.)])\s+")
_PAGE_NUMBER = re.compile(
    r"^(page\s*)?[\divxlc]{1,6}([\-–/.]\s*[\divxlc]{1,6})?(\s*of\s*\d+)?$", re.IGNORECASE
)
_WS = re.compile(r"\s+")
# a section number opening a heading: "2", "2.1", "2.1.3", "(3)", "IV.", "A." then the title
_SECTION_NUMBER = re.compile(
    r"^\s*(\(\d{1,2}\)|\d{1,2}(\.\d{1,2}){0,3}\.?|[IVX]{1,5}\.|[A-H]\.)\s+\S"
)
_LETTERS = re.compile(r"[^\W\d_]{2}")  # two letters of any script (Hangul, Arabic, Latin...)


@lru_cache(maxsize=1)
def _pymupdf() -> Any:
    try:
        import pymupdf
    except ImportError as exc:
        raise UnsupportedFormat(
            "PDF support needs PyMuPDF, which is not installed",
            hint="pip install -e '.[pdf]' in the kg-platform repository",
        ) from exc
    return pymupdf


@lru_cache(maxsize=1)
def _table_options() -> dict[str, Any]:
    """PyMuPDF >= 2 gates tables through an ML layout model when ``pymupdf-layout`` is present
    (seconds per page on CPU); the classic line strategy is fast and deterministic."""
    find = _pymupdf().table.find_tables
    return {"use_layout": False} if "use_layout" in inspect.signature(find).parameters else {}


@dataclass
class _Item:
    kind: str  # text | list | table | figure | heading
    text: str
    bbox: tuple[float, float, float, float]
    page: int
    size: float = 0.0  # dominant font size (by characters)
    lead: float = 0.0  # font size of the first span (headings start big)
    bold: bool = False
    heavy: bool = False  # medium/semibold (or bold) weight throughout
    run_in: bool = False  # a styled first line split from its paragraph
    lines: int = 1
    level: int = 0  # heading level once decided
    labels: list[str] = field(default_factory=list)

    @property
    def cx(self) -> float:
        return (self.bbox[0] + self.bbox[2]) / 2

    @property
    def cy(self) -> float:
        return (self.bbox[1] + self.bbox[3]) / 2

    @property
    def width(self) -> float:
        return self.bbox[2] - self.bbox[0]


@dataclass
class _Page:
    number: int
    width: float
    height: float
    items: list[_Item]
    images: int


def _inside(x: float, y: float, r: tuple[float, float, float, float], pad: float = 1.0) -> bool:
    return r[0] - pad <= x <= r[2] + pad and r[1] - pad <= y <= r[3] + pad


def _union(a: tuple[float, ...], b: tuple[float, ...]) -> tuple[float, float, float, float]:
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))


def _join_lines(lines: list[str]) -> str:
    """Lines of a paragraph joined; a word broken at a line-end hyphen is joined with a soft
    hyphen mark, which :func:`_resolve_hyphens` turns into "-" or nothing for the document."""
    out = ""
    for line in lines:
        if not out:
            out = line
        elif out.endswith("-") and line[:1].islower() and out[-2:-1].isalpha():
            out = out[:-1] + SOFT_HYPHEN + line  # "appoint-" + "ments", "self-" + "locking"
        else:
            out += " " + line
    return out


SOFT_HYPHEN = "\u00ad"
_BROKEN = re.compile(r"(\w+)\u00ad(\w+)")
# the second half of a word hyphenated by the typesetter, when the document cannot tell
_SUFFIXES = re.compile(
    r"^(ments?|tions?|sions?|ness(es)?|it(y|ies)|ances?|ences?|ous(ly)?|ively|ically|ations?"
    r"|izations?|ally|ing(ly)?|ed|ers?|able|ible|ers?|ure[sd]?|ial(ly)?|ive|ists?|ism)$"
)
_LIGATURES = {c: unicodedata.normalize("NFKC", chr(c)) for c in range(0xFB00, 0xFB07)}


def _resolve_hyphens(pages: list[_Page]) -> None:
    """Each line-end break becomes "a-b" where the document writes "a-b" elsewhere, "ab" where
    it writes "ab" elsewhere, else "ab" when "b" is a word ending ("appoint-ments"), else
    "a-b" (a compound such as "self-locking")."""
    texts = [it.text for page in pages for it in page.items]
    if not any(SOFT_HYPHEN in t for t in texts):
        return
    whole = " ".join(texts).lower()
    words = Counter(re.findall(r"\w+(?:-\w+)*", whole))

    def pick(m: re.Match[str]) -> str:
        a, b = m.group(1), m.group(2)
        if words[f"{a}-{b}".lower()]:
            return f"{a}-{b}"
        if words[(a + b).lower()] or _SUFFIXES.match(b.lower()):
            return a + b
        return f"{a}-{b}"

    for page in pages:
        for it in page.items:
            if SOFT_HYPHEN in it.text:
                it.text = _BROKEN.sub(pick, it.text).replace(SOFT_HYPHEN, "-")


def _is_bold(span: dict[str, Any]) -> bool:
    return bool(span["flags"] & 16) or "bold" in span["font"].lower()


def _is_heavy(span: dict[str, Any]) -> bool:
    font = span["font"].lower()
    return _is_bold(span) or any(w in font for w in ("medium", "semibold", "demi", "heavy"))


def _styled(line: dict[str, Any]) -> bool:
    spans = [s for s in line["spans"] if s["text"].strip()]
    return bool(spans) and all(_is_bold(s) or s["flags"] & 2 for s in spans)  # 2: italic


def _split_run_in(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A paragraph whose first line alone is bold or italic (a run-in heading set on its own
    line, "Boots Self-Locking Nut" then the text) becomes two blocks: that line, then the rest."""
    out: list[dict[str, Any]] = []
    for block in blocks:
        lines = [ln for ln in block.get("lines", ()) if any(s["text"].strip() for s in ln["spans"])]
        if block.get("type") == 0 and len(lines) >= 2 and _styled(lines[0]):
            head = _WS.sub(" ", "".join(s["text"] for s in lines[0]["spans"])).strip()
            if (
                not _styled(lines[1])
                and len(head.split()) <= 12
                and head[-1:] not in ".,;:"
                and _LETTERS.search(head)
                and not _CAPTION.match(head)
            ):
                rest = lines[1:]
                bbox = tuple(rest[0]["bbox"])
                for ln in rest[1:]:
                    bbox = _union(bbox, tuple(ln["bbox"]))
                out.append({"type": 0, "bbox": lines[0]["bbox"], "lines": [lines[0]], "run_in": 1})
                out.append({"type": 0, "bbox": bbox, "lines": rest})
                continue
        out.append(block)
    return out


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


# -- one page ----------------------------------------------------------------------------------
def _read_page(page: Any, number: int) -> _Page:
    fitz = _pymupdf()
    rect = page.rect
    page_area = max(rect.width * rect.height, 1.0)
    # Text and image positions come in unrotated page space; tables and reading order use the
    # page as displayed, so rotated (landscape) pages are mapped through the rotation matrix.
    matrix = page.rotation_matrix if page.rotation else None

    def box(b: Any) -> tuple[float, float, float, float]:
        if matrix is None:
            return tuple(b)  # type: ignore[return-value]
        return tuple(fitz.Rect(b) * matrix)  # type: ignore[return-value]

    image_boxes = [box(info["bbox"]) for info in page.get_image_info()]
    image_boxes = [b for b in image_boxes if (b[2] - b[0]) * (b[3] - b[1]) > 0.005 * page_area]

    items: list[_Item] = []
    table_boxes: list[tuple[float, float, float, float]] = []
    if _has_grid(page):
        found = page.find_tables(**_table_options())
        if found.tables:
            words = [(*box(w[:4]), *w[4:]) for w in page.get_text("words")]
            for table in found.tables:
                md = _table_markdown(table, words)
                if md:
                    tbox = tuple(table.bbox)
                    table_boxes.append(tbox)  # type: ignore[arg-type]
                    items.append(_Item("table", md, tbox, number))  # type: ignore[arg-type]

    flags = fitz.TEXTFLAGS_DICT & ~fitz.TEXT_PRESERVE_IMAGES
    labels: list[_Item] = []
    for block in _split_run_in(page.get_text("dict", flags=flags)["blocks"]):
        if block.get("type") != 0:
            continue
        bbox = box(block["bbox"])
        cx, cy = (bbox[0] + bbox[2]) / 2, (bbox[1] + bbox[3]) / 2
        if any(_inside(cx, cy, t) for t in table_boxes):
            continue
        spans = [s for line in block["lines"] for s in line["spans"] if s["text"].strip()]
        if not spans:
            continue
        lines = [
            _WS.sub(" ", "".join(s["text"] for s in line["spans"])).strip().translate(_LIGATURES)
            for line in block["lines"]
        ]
        lines = [ln for ln in lines if ln]
        text = _join_lines(lines)
        chars: Counter[float] = Counter()
        for s in spans:
            chars[round(s["size"] * 2) / 2] += len(s["text"].strip())
        size = chars.most_common(1)[0][0]
        lead = round(spans[0]["size"] * 2) / 2
        bold = all(_is_bold(s) for s in spans)
        heavy = all(_is_heavy(s) for s in spans)
        if len(text) <= 600 and (
            _CAPTION_STRICT.match(text)
            or (_CAPTION.match(text) and image_boxes and len(lines) <= 3)
        ):
            items.extend(_split_captions(block, number, box))
            continue
        kind = "list" if _BULLET.match(text) else "text"
        item = _Item(
            kind,
            text,
            bbox,
            number,
            size=size,
            lead=lead,  # type: ignore[arg-type]
            bold=bold,
            heavy=heavy,
            run_in=bool(block.get("run_in")),
            lines=len(lines),
        )
        if len(text.split()) <= 12 and any(_inside(cx, cy, b, pad=0) for b in image_boxes):
            labels.append(item)  # text printed inside a figure (callouts, legends)
        else:
            items.append(item)

    figures = [it for it in items if it.kind == "figure"]
    for label in labels:
        if figures:
            nearest = min(figures, key=lambda f: abs(f.cx - label.cx) + abs(f.cy - label.cy))
            nearest.labels.append(label.text)
        else:
            items.append(label)
    return _Page(number, rect.width, rect.height, items, len(image_boxes))


def _split_captions(block: dict[str, Any], number: int, box: Any) -> list[_Item]:
    """One figure item per "Figure N" in the block (captions of side-by-side figures share one)."""
    out: list[_Item] = []
    for line in block["lines"]:
        for span in line["spans"]:
            text = span["text"]
            if not text.strip():
                if out:
                    out[-1].text += " "
                continue
            if _CAPTION.match(text) or not out:
                out.append(_Item("figure", text, box(span["bbox"]), number))
            else:
                out[-1].text += text
                out[-1].bbox = _union(out[-1].bbox, box(span["bbox"]))
        if out:
            out[-1].text += " "
    for it in out:
        it.text = _WS.sub(" ", it.text).strip().translate(_LIGATURES)
    return [it for it in out if it.text]


# -- whole document ----------------------------------------------------------------------------
def _reading_order(items: list[_Item]) -> list[_Item]:
    """Full-width items cut the page into bands; inside a band, read column by column."""
    if len(items) < 2:
        return items
    left = min(it.bbox[0] for it in items)
    right = max(it.bbox[2] for it in items)
    span = max(right - left, 1.0)
    wide = sorted((it for it in items if it.width > WIDE_FRACTION * span), key=lambda i: i.bbox[1])
    narrow = [it for it in items if it.width <= WIDE_FRACTION * span]
    bands: list[list[_Item]] = [[] for _ in range(len(wide) + 1)]
    for it in narrow:
        k = sum(1 for w in wide if w.cy < it.cy)
        bands[k].append(it)
    ordered: list[_Item] = []
    for k, band in enumerate(bands):
        ordered.extend(_columns(band))
        if k < len(wide):
            ordered.append(wide[k])
    return ordered


def _columns(band: list[_Item]) -> list[_Item]:
    clusters: list[list[_Item]] = []
    extent: list[list[float]] = []
    for it in sorted(band, key=lambda i: i.bbox[0]):
        if clusters and it.bbox[0] < extent[-1][1] - 3:
            clusters[-1].append(it)
            extent[-1][1] = max(extent[-1][1], it.bbox[2])
        else:
            clusters.append([it])
            extent.append([it.bbox[0], it.bbox[2]])
    out: list[_Item] = []
    for cluster in clusters:
        out.extend(sorted(cluster, key=lambda i: (round(i.bbox[1], 1), i.bbox[0])))
    return out


def _drop_running_heads(pages: list[_Page]) -> int:
    """Remove page numbers and headers/footers repeated on at least half of the pages."""

    def in_margin(it: _Item, page: _Page) -> bool:
        return it.cy < MARGIN_FRACTION * page.height or it.cy > (1 - MARGIN_FRACTION) * page.height

    def key(it: _Item) -> str:
        return re.sub(r"\d+", "#", _WS.sub(" ", it.text.lower())).strip()

    seen: Counter[str] = Counter()
    for page in pages:
        seen.update({key(it) for it in page.items if it.kind == "text" and in_margin(it, page)})
    threshold = max(3, math.ceil(0.5 * len(pages)))
    removed = 0
    for page in pages:
        keep = []
        for it in page.items:
            if (
                it.kind in ("text", "list")
                and in_margin(it, page)
                and (
                    _PAGE_NUMBER.match(it.text.strip())
                    or (len(pages) >= 3 and seen[key(it)] >= threshold)
                )
            ):
                removed += 1
                continue
            keep.append(it)
        page.items = keep
    return removed


def _body_size(pages: list[_Page]) -> float:
    chars: Counter[float] = Counter()
    for page in pages:
        for it in page.items:
            if it.kind in ("text", "list"):
                chars[it.size] += len(it.text)
    return chars.most_common(1)[0][0] if chars else 10.0


def _heading_like(it: _Item, body: float) -> bool:
    """Size, weight and numbering together: clearly larger type, or bold at body size, or a
    section number ("2.1", "(3)", "IV.") on one line set a little larger or heavier."""
    text = it.text.strip()
    numbered = bool(_SECTION_NUMBER.match(text)) and it.lines <= 2 and len(text) <= 150
    if it.kind not in ("text", "list") or (it.kind == "list" and not numbered):
        return False
    if len(text) > 200 or len(text.split()) > 20 or it.lines > 3:
        return False
    if not _LETTERS.search(text) or text[-1] in ".,;:" or _PAGE_NUMBER.match(text):
        return False
    bigger = it.lead >= body + max(1.0, 0.12 * body)
    if bigger or ((it.bold or it.run_in) and it.lead >= body - 0.5):
        return True
    return numbered and (it.lead >= body + 0.75 or it.heavy) and it.lead >= body - 0.5


def _drop_heading_runs(pages: list[_Page], heads: list[_Item]) -> list[_Item]:
    """A heading is followed by text: three or more candidates in a row in the same type with
    nothing between them are a list, a code listing or a cover page's names, not headings."""
    candidate = {id(it) for it in heads}
    drop: set[int] = set()
    run: list[_Item] = []

    def close() -> None:
        if len(run) >= 3:
            drop.update(id(it) for it in run)
        run.clear()

    for page in pages:
        for it in page.items:
            if id(it) not in candidate:
                close()
            elif run and (run[-1].lead, run[-1].bold) != (it.lead, it.bold):
                close()
                run.append(it)
            else:
                run.append(it)
    close()
    return [it for it in heads if id(it) not in drop]


def _font_headings(pages: list[_Page]) -> None:
    """Mark headings by font: sizes above the body text rank first, bold body-size text last."""
    body = _body_size(pages)
    heads = [it for page in pages for it in page.items if _heading_like(it, body)]
    texts = sum(1 for page in pages for it in page.items if it.kind == "text")
    bold_body = [it for it in heads if it.bold and it.lead < body + max(1.0, 0.12 * body)]
    if texts and len(bold_body) > 0.4 * texts:
        # bold is the body style here (slides, forms): only larger type marks a heading
        drop = {id(it) for it in bold_body}
        heads = [it for it in heads if id(it) not in drop]
    heads = _drop_heading_runs(pages, heads)
    bigger = sorted(
        {it.lead for it in heads if it.lead >= body + max(1.0, 0.12 * body)}, reverse=True
    )
    rank = {size: k + 1 for k, size in enumerate(bigger)}
    for it in heads:
        it.kind = "heading"
        it.level = min(rank.get(it.lead, len(bigger) + 1), 6)


def _norm(text: str) -> str:
    return _WS.sub(" ", re.sub(r"[^\w\s]", " ", text.lower())).strip()


def _toc_headings(pages: list[_Page], toc: list[list[Any]]) -> None:
    """Mark the outline entries as headings at their outline level (found by text on the page)."""
    by_number = {p.number: p for p in pages}
    for entry in toc:
        level, title, number = int(entry[0]), str(entry[1]).strip(), int(entry[2])
        page = by_number.get(number)
        if not title or page is None:
            continue
        want = _norm(title)
        for k, it in enumerate(page.items):
            if it.kind not in ("text", "list"):
                continue
            have = _norm(it.text)
            if have == want or (want and have.startswith(want)):
                rest = it.text.strip()[len(title) :].strip() if have != want else ""
                page.items[k] = _Item(
                    "heading", title, it.bbox, number, size=it.size, level=min(level, 6)
                )
                if rest and it.text.strip().lower().startswith(title.lower()):
                    page.items.insert(k + 1, _Item(it.kind, rest, it.bbox, number, size=it.size))
                break
        else:  # not printed on the page (or printed differently): the section starts there
            first = page.items[0].bbox if page.items else (0.0, 0.0, 0.0, 0.0)
            page.items.insert(0, _Item("heading", title, first, number, level=min(level, 6)))


def _check_container(raw: RawFile) -> None:
    if b"%PDF-" not in raw.head[:1024]:
        raise CorruptDocument(
            f"{raw.path}: not a PDF (no %PDF header)",
            hint="the file is misnamed or damaged; rename or re-export it",
        )
    with open(raw.path, "rb") as fh:
        fh.seek(max(0, raw.size - TAIL_BYTES))
        tail = fh.read()
    if b"%%EOF" not in tail:
        raise CorruptDocument(
            f"{raw.path}: the PDF is truncated (no %%EOF at its end)",
            hint="the download or copy was cut short; fetch the file again",
        )


def parse_pdf(raw: RawFile) -> ParsedDocument:
    """Parse a PDF into sections of text, list, table and figure blocks with page numbers."""
    fitz = _pymupdf()
    _check_container(raw)
    try:
        doc = fitz.open(raw.path)
    except Exception as exc:  # noqa: BLE001 - PyMuPDF raises several untyped errors on bad files
        raise CorruptDocument(
            f"{raw.path}: PyMuPDF cannot open the PDF ({exc})",
            hint="the file is damaged; re-export or re-download it",
        ) from None
    warnings: list[str] = []
    with doc:
        if doc.needs_pass:
            raise EncryptedDocument(
                f"{raw.path}: the PDF is password protected",
                hint="save an unprotected copy (or decrypt it with qpdf --decrypt) and ingest that",
            )
        if doc.is_encrypted:
            warnings.append("PDF has owner-password restrictions; text was extracted anyway")
        if doc.page_count == 0:
            raise CorruptDocument(
                f"{raw.path}: the PDF has no pages", hint="the file is damaged; re-export it"
            )
        pages: list[_Page] = []
        links: list[str] = []
        try:
            for page in doc:
                pages.append(_read_page(page, page.number + 1))
                for link in page.get_links():
                    uri = link.get("uri")
                    if uri and uri not in links:
                        links.append(uri)
            toc = doc.get_toc(simple=True)
        except (RuntimeError, fitz.mupdf.FzErrorBase) as exc:  # MuPDF: damaged content
            raise CorruptDocument(
                f"{raw.path}: damaged PDF content ({exc})",
                hint="re-export the PDF or print it to a new PDF",
            ) from None
        metadata = {
            k: str(v)
            for k, v in (doc.metadata or {}).items()
            if v and k in ("title", "author", "subject", "creator", "producer")
        }
        meta_title = (doc.metadata or {}).get("title") or ""
        page_count = doc.page_count

    if not any(it.text.strip() for p in pages for it in p.items):
        if any(p.images for p in pages):
            raise NeedsOCR(
                f"{raw.path}: the PDF has images but no text layer (scanned?)",
                hint="OCR is not enabled in kg-platform; run OCR first (e.g. "
                "ocrmypdf in.pdf out.pdf) and ingest the result",
            )
        raise EmptyDocument(f"{raw.path}: the PDF has no text", hint="nothing to ingest")

    _resolve_hyphens(pages)
    removed = _drop_running_heads(pages)
    if removed:
        metadata["running_heads_removed"] = str(removed)
    for page in pages:
        page.items = _reading_order(page.items)
    if toc:
        _toc_headings(pages, toc)
        metadata["headings_from"] = "outline"
    else:
        _font_headings(pages)
        metadata["headings_from"] = "fonts"

    builder = TreeBuilder()
    first_heading: str | None = None
    for page in pages:
        for it in page.items:
            if it.kind == "heading":
                builder.heading(it.text, it.level, page=it.page)
                first_heading = first_heading or it.text
            elif it.kind == "figure":
                text = it.text
                if it.labels:
                    text += "\n(labels in the figure: " + "; ".join(it.labels) + ")"
                builder.block(text, "figure", page=it.page)
            else:
                builder.block(it.text, it.kind, page=it.page)  # type: ignore[arg-type]
    root = builder.finish()
    title = meta_title.strip() or first_heading or raw.path.stem
    return ParsedDocument(
        uri=raw.uri,
        title=title,
        mime=MIME,
        root=root,
        sha256=raw.sha256,
        bytes=raw.size,
        pages=page_count,
        links=links,
        warnings=warnings,
        metadata=metadata,
    )


__all__ = ["parse_pdf"]
