"""PDF page model and whole-document layout: reading order, page furniture, headings.

Used by :mod:`kg_platform.parsing.pdf`. Blocks are put in reading order (column by column,
between full-width blocks), running heads/footers and page numbers are dropped, and headings come
from the outline or from font size, weight and section numbering relative to the body text.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

WIDE_FRACTION = 0.6  # a block wider than this share of the text area spans the columns
MARGIN_FRACTION = 0.1  # top/bottom band where running heads and page numbers live

_PAGE_NUMBER = re.compile(
    r"^(page\s*)?[\divxlc]{1,6}([\-–/.]\s*[\divxlc]{1,6})?(\s*of\s*\d+)?$", re.IGNORECASE
)
_WS = re.compile(r"\s+")
# a section number opening a heading: "2", "2.1", "2.1.3", "(3)", "IV.", "A." then the title
_SECTION_NUMBER = re.compile(
    r"^\s*(\(\d{1,2}\)|\d{1,2}(\.\d{1,2}){0,3}\.?|[IVX]{1,5}\.|[A-H]\.)\s+\S"
)
_LETTERS = re.compile(r"[^\W\d_]{2}")  # two letters of any script (Hangul, Arabic, Latin...)
_LIGATURES = {c: unicodedata.normalize("NFKC", chr(c)) for c in range(0xFB00, 0xFB07)}
# Arabic-script fonts often map the lam-alef ligature glyph to "alef, lam" (visual order): after
# an alef this gives "ا" + "ال"/"أل"/"إل"/"آل"; two alefs in a row do not occur in Arabic or
# Persian words, so the pair is put back in logical order ("کاال" -> "کالا", "األ" -> "الأ").
_LAM_ALEF = re.compile("\u0627([\u0627\u0623\u0625\u0622])\u0644")
_RTL_LETTER = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc]")


def clean_text(text: str) -> str:
    """Ligatures expanded (ﬁ -> fi) and lam-alef ligatures put back in logical order."""
    text = text.translate(_LIGATURES)
    return _LAM_ALEF.sub("\u0627\u0644\\1", text) if "\u0644" in text else text


def is_rtl(words: list[str]) -> bool:
    """Most letters of these words are Hebrew or Arabic script (read right to left)."""
    joined = "".join(words)
    rtl = len(_RTL_LETTER.findall(joined))
    return rtl > 0 and 2 * rtl >= sum(1 for c in joined if c.isalpha())


def rtl_line_text(chars: list[dict[str, Any]]) -> str:
    """One right-to-left line's text in logical order, from its characters' positions.

    PDF writers emit a line's characters in any order; PyMuPDF keeps that order, so a comma or
    a space drawn at the line's left end can land inside the last word ("الأولويو ،خت" for
    "الأولويوخت،"). Read by position instead: right to left, each combining mark staying after
    its base letter, and a run of digits or Latin letters (with the spaces and punctuation
    between them) read left to right inside it.
    """
    glyphs: list[tuple[float, str]] = []  # (centre x, base letter + its marks)
    for ch in chars:
        c = ch["c"]
        if glyphs and unicodedata.combining(c):
            x, text = glyphs[-1]
            glyphs[-1] = (x, text + c)
            continue
        bbox = ch["bbox"]
        # a space sits left of the word it ends; some writers give it a box over that word
        glyphs.append((bbox[0] if c.isspace() else (bbox[0] + bbox[2]) / 2, c))
    visual = [g for _, g in sorted(glyphs, key=lambda g: -g[0])]  # right to left; stable

    def kind(g: str) -> str:
        c = g[0]
        if _RTL_LETTER.match(c) and not c.isdigit():
            return "R"
        return "L" if c.isalnum() else "N"

    kinds = [kind(g) for g in visual]
    out: list[str] = []
    i = 0
    while i < len(visual):
        if kinds[i] != "L":
            out.append(visual[i])
            i += 1
            continue
        j = last = i  # a left-to-right run: from this L to the last L before an R letter
        while j < len(visual) and kinds[j] != "R":
            if kinds[j] == "L":
                last = j
            j += 1
        out.extend(reversed(visual[i : last + 1]))
        i = last + 1
    return "".join(out)


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
    chars: Counter[float] = field(default_factory=Counter)  # characters by font size, tables too


def _inside(x: float, y: float, r: tuple[float, float, float, float], pad: float = 1.0) -> bool:
    return r[0] - pad <= x <= r[2] + pad and r[1] - pad <= y <= r[3] + pad


def _union(a: tuple[float, ...], b: tuple[float, ...]) -> tuple[float, float, float, float]:
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))


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
    """The body text's font size: the most common size by characters over all the text, tables
    included (a form whose body sits in tables has only its headings outside them)."""
    chars: Counter[float] = Counter()
    for page in pages:
        chars.update(page.chars)
        if not page.chars:
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


COVER_FACTOR = 2.5  # a first or last page whose largest heading is this many times the body size


def _cover_title(pages: list[_Page], heads: list[_Item], body: float) -> list[_Item]:
    """A cover page (the first or the last page, set in display type: a heading at least
    ``COVER_FACTOR`` times the body size, and less than half its text at the body size) has one
    title: its largest heading of three words or
    more. Its other large lines ("Front cover", the series name, the publisher's address) stay
    text, so the cover does not open a string of empty sections."""
    if not pages:
        return heads
    drop: set[int] = set()
    for number in {pages[0].number, pages[-1].number}:
        mine = [it for it in heads if it.page == number]
        if len(mine) < 2 or max(it.size for it in mine) < COVER_FACTOR * body:
            continue
        chars = next(p.chars for p in pages if p.number == number)
        if 2 * sum(n for size, n in chars.items() if abs(size - body) <= 0.5) >= sum(
            chars.values()
        ):
            continue  # mostly body text: a first page with its title, not a cover
        titled = [it for it in mine if len(it.text.split()) >= 3] or mine
        title = max(titled, key=lambda it: it.size)
        drop.update(id(it) for it in mine if it is not title)
    return [it for it in heads if id(it) not in drop]


def _font_headings(pages: list[_Page]) -> None:
    """Mark headings by font: sizes above the body text rank first, bold body-size text last."""
    body = _body_size(pages)
    heads = [it for page in pages for it in page.items if _heading_like(it, body)]
    total = sum(sum(p.chars.values()) for p in pages) or sum(
        len(it.text) for p in pages for it in p.items if it.kind in ("text", "list")
    )
    bold_body = [it for it in heads if it.bold and it.lead < body + max(1.0, 0.12 * body)]
    if total and sum(len(it.text) for it in bold_body) > 0.4 * total:
        # bold is the body style here (slides, forms): only larger type marks a heading
        drop = {id(it) for it in bold_body}
        heads = [it for it in heads if id(it) not in drop]
    heads = _drop_heading_runs(pages, heads)
    heads = _cover_title(pages, heads, body)
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
