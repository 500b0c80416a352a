"""Word's automatic heading numbers ("1", "1.2", "2.1.1"), which mammoth does not write.

Word numbers a heading from ``numbering.xml``: the paragraph (or its style, or a style it is
based on) names a numbering (``numId``) and a level (``ilvl``); each level has a start value, a
number format and a text such as ``%1.%2.``. The counters are replayed over the body's
paragraphs in order, and each numbered heading's label is put before its title in the Markdown.
Styles derived from a heading style ("heading 2 invisible num", based on Heading 2) are mapped
to that heading level, as Word shows them.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_HEADING = re.compile(r"^heading\s?(\d)$", re.IGNORECASE)
_MD_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
# a list item's markers ("* + 1." where a list opens below its first level) and its text
_MD_ITEM = re.compile(r"^(\s*)(?:(?:\d{1,3}[.)]|[-*+])\s+)+(.*)$")
MAX_LEVELS = 9  # Word's numbering levels 0-8
LOOKAHEAD = 3  # a Markdown heading is matched with one of the next numbered headings


def _val(element: Any, path: str) -> str | None:
    found = element.find(path) if element is not None else None
    return found.get(_W + "val") if found is not None else None


def _roman(n: int) -> str:
    out = ""
    for value, digits in (
        (1000, "m"),
        (900, "cm"),
        (500, "d"),
        (400, "cd"),
        (100, "c"),
        (90, "xc"),
        (50, "l"),
        (40, "xl"),
        (10, "x"),
        (9, "ix"),
        (5, "v"),
        (4, "iv"),
        (1, "i"),
    ):
        while n >= value:
            out += digits
            n -= value
    return out


def _format(n: int, fmt: str) -> str:
    if fmt in ("lowerLetter", "upperLetter"):
        text = chr(ord("a") + (n - 1) % 26) * ((n - 1) // 26 + 1) if n > 0 else str(n)
        return text.upper() if fmt == "upperLetter" else text
    if fmt in ("lowerRoman", "upperRoman"):
        return _roman(n).upper() if fmt == "upperRoman" else _roman(n)
    if fmt in ("none", "bullet"):
        return ""
    return str(n)  # decimal and the formats read as decimal (decimalZero, ordinal, ...)


class _Styles:
    def __init__(self, root: Any) -> None:
        self.by_id: dict[str, Any] = {}
        for style in root.iter(_W + "style") if root is not None else ():
            if style.get(_W + "type") == "paragraph":
                self.by_id[style.get(_W + "styleId", "")] = style

    def chain(self, style_id: str | None) -> list[Any]:
        out: list[Any] = []
        while style_id and style_id in self.by_id and len(out) < 20:
            style = self.by_id[style_id]
            out.append(style)
            style_id = _val(style, _W + "basedOn")
        return out

    def heading_level(self, style_id: str | None) -> int | None:
        """The heading level of a style or of the heading style it is based on."""
        for style in self.chain(style_id):
            name = _val(style, _W + "name") or ""
            m = _HEADING.match(name) or _HEADING.match(style.get(_W + "styleId", ""))
            if m:
                return int(m.group(1))
            if name.lower() == "title":
                return 1
        return None


class _Numbering:
    def __init__(self, root: Any) -> None:
        self.levels: dict[str, dict[int, tuple[int, str, str]]] = {}
        self.abstract_of: dict[str, str] = {}
        if root is None:
            return
        for abstract in root.iter(_W + "abstractNum"):
            levels: dict[int, tuple[int, str, str]] = {}
            for lvl in abstract.iter(_W + "lvl"):
                start = int(_val(lvl, _W + "start") or 0)
                levels[int(lvl.get(_W + "ilvl", "0"))] = (
                    start,
                    _val(lvl, _W + "numFmt") or "decimal",
                    _val(lvl, _W + "lvlText") or "",
                )
            self.levels[abstract.get(_W + "abstractNumId", "")] = levels
        for num in root.iter(_W + "num"):
            self.abstract_of[num.get(_W + "numId", "")] = _val(num, _W + "abstractNumId") or ""
        self.counters: dict[str, list[int | None]] = {}

    def label(self, num_id: str, ilvl: int) -> str:
        abstract = self.abstract_of.get(num_id)
        levels = self.levels.get(abstract or "")
        if not levels or ilvl not in levels or not 0 <= ilvl < MAX_LEVELS:
            return ""
        counters = self.counters.setdefault(abstract or "", [None] * MAX_LEVELS)
        for k in range(ilvl):  # a level skipped over counts from its start value
            if counters[k] is None:
                counters[k] = levels.get(k, (1, "decimal", ""))[0]
        current = counters[ilvl]
        counters[ilvl] = levels[ilvl][0] if current is None else current + 1
        for k in range(ilvl + 1, MAX_LEVELS):
            counters[k] = None
        text = levels[ilvl][2]

        def value(m: re.Match[str]) -> str:
            k = int(m.group(1)) - 1
            n = counters[k] if 0 <= k < MAX_LEVELS else None
            return _format(n, levels.get(k, (1, "decimal", ""))[1]) if n is not None else ""

        return re.sub(r"%(\d)", value, text).strip() if levels[ilvl][1] != "bullet" else ""


def _read(zf: zipfile.ZipFile, name: str) -> Any:
    try:
        return ElementTree.fromstring(zf.read(name))
    except KeyError:
        return None


def heading_numbers(path: Path) -> tuple[list[tuple[str, str]], list[str]]:
    """(title, label) for each numbered heading in body order, and mammoth style-map lines for
    paragraph styles based on a heading style that mammoth would not see as headings."""
    headings, _, style_map = numbered_paragraphs(path)
    return headings, style_map


def numbered_paragraphs(
    path: Path,
) -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[str]]:
    """:func:`heading_numbers`' headings, then (text, label) for each other paragraph that
    Word numbers with digits, letters or roman numerals ("2.3.1."; bullets have no label), in
    body order, then the style-map lines."""
    with zipfile.ZipFile(path) as zf:
        document = _read(zf, "word/document.xml")
        styles = _Styles(_read(zf, "word/styles.xml"))
        numbering = _Numbering(_read(zf, "word/numbering.xml"))
    style_map = []
    for style_id, style in styles.by_id.items():
        name = _val(style, _W + "name") or style_id
        level = styles.heading_level(style_id)
        if level and not _HEADING.match(name) and name.lower() != "title" and "'" not in name:
            style_map.append(f"p[style-name='{name}'] => h{level}:fresh")
    out: list[tuple[str, str]] = []
    items: list[tuple[str, str]] = []
    if document is None or not numbering.levels:
        return out, items, style_map
    for p in document.iter(_W + "p"):
        ppr = p.find(_W + "pPr")
        style_id = _val(ppr, _W + "pStyle")
        num_id = _val(ppr, f"{_W}numPr/{_W}numId")
        ilvl = _val(ppr, f"{_W}numPr/{_W}ilvl")
        for style in styles.chain(style_id):
            if num_id is None:
                num_id = _val(style.find(_W + "pPr"), f"{_W}numPr/{_W}numId")
            if ilvl is None:
                ilvl = _val(style.find(_W + "pPr"), f"{_W}numPr/{_W}ilvl")
        if not num_id or num_id == "0":
            continue
        label = numbering.label(num_id, int(ilvl or 0))
        if label:
            text = "".join(t.text or "" for t in p.iter(_W + "t")).strip()
            if text:
                (out if styles.heading_level(style_id) else items).append((text, label))
    return out, items, style_map


def _norm(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def number_list_items(markdown: str, items: list[tuple[str, str]]) -> str:
    """The Markdown with each numbered list item's marker replaced by Word's own label (the
    converter numbers every level from 1: "1." where Word shows "2.3.1.")."""
    if not items:
        return markdown
    lines = markdown.split("\n")
    j = 0
    for i, line in enumerate(lines):
        m = _MD_ITEM.match(line)
        if not m or j >= len(items):
            continue
        have = _norm(m.group(2))
        for k in range(j, min(j + LOOKAHEAD, len(items))):
            text, label = items[k]
            if _norm(text) == have:
                lines[i] = f"{m.group(1)}{label} {m.group(2)}"
                j = k + 1
                break
    return "\n".join(lines)


def number_headings(markdown: str, numbers: list[tuple[str, str]]) -> str:
    """The Markdown with each numbered heading's label before its title."""
    if not numbers:
        return markdown
    lines = markdown.split("\n")
    j = 0
    for i, line in enumerate(lines):
        m = _MD_HEADING.match(line)
        if not m or j >= len(numbers):
            continue
        have = _norm(m.group(2))
        for k in range(j, min(j + LOOKAHEAD, len(numbers))):
            title, label = numbers[k]
            if _norm(title) == have:
                lines[i] = f"{m.group(1)} {label} {m.group(2)}"
                j = k + 1
                break
    return "\n".join(lines)


__all__ = ["heading_numbers", "number_headings", "number_list_items", "numbered_paragraphs"]
