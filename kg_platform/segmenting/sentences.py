"""A rule-based English sentence splitter: pure Python, no model, no download.

Why rules and not a model: ingestion must run offline and fast, and the segmenter's output defines
piece and sentence ids, so it has to be deterministic. The rules cover what real documents contain:
abbreviations ("e.g.", "Dr.", "U.S."), initials ("J. R. R. Tolkien"), decimals and versions
("3.5", "v1.2"), ellipses, closing quotes/brackets after the full stop, bullet and numbered lists,
and hard line structure (blank lines, list items, table rows) versus soft-wrapped lines.
"""

from __future__ import annotations

import re

__all__ = ["split_sentences", "split_units", "ABBREVIATIONS"]

#: Lower-cased words that end with a full stop without ending the sentence.
ABBREVIATIONS: frozenset[str] = frozenset(
    """
    mr mrs ms dr prof sr jr st mt ft rev hon gen col lt sgt capt cmdr adm gov sen rep pres
    vs v etc e.g i.e cf al approx ca c viz resp esp incl excl dept univ assn bros inc ltd co corp
    llc plc no nos vol vols fig figs eq eqs ch chap sec secs pp p para art ed eds trans repr
    jan feb mar apr jun jul aug sep sept oct nov dec mon tue wed thu fri sat sun
    a.m p.m u.s u.k u.n e.u u.s.a ph.d m.d b.a m.a b.sc m.sc d.c n.y l.a
    est min max avg dept govt intl natl assoc ave blvd rd
    """.split()
)

#: Abbreviations that may legitimately end a sentence when a capitalised word follows.
_TERMINAL_OK = frozenset(
    {
        "etc",
        "al",
        "u.s",
        "u.k",
        "u.n",
        "e.u",
        "u.s.a",
        "inc",
        "ltd",
        "co",
        "corp",
        "llc",
        "plc",
        "d.c",
        "a.m",
        "p.m",
    }
)

_BULLET = re.compile(
    r"^\s*(?:[-*+\u2022\u2023\u25e6\u2043\u2219]|\(?\d{1,3}[.)]|\(?[a-zA-Z][.)])\s+"
)
_TABLE_ROW = re.compile(r"^\s*\|")
_HEADING = re.compile(r"^\s*#{1,6}\s")
# A candidate boundary: terminal punctuation, optional closing quotes/brackets, whitespace.
_CANDIDATE = re.compile(r"([.!?\u2026]+)([\"'\u201d\u2019)\]]*)(\s+)")
_WORD_BEFORE = re.compile(r"([\w.\-']+)$")


def split_units(text: str) -> list[str]:
    """Split text into hard line units: paragraphs, list items, table rows, headings.

    A blank line always separates; a line that starts a list item, a table row or a heading starts
    a new unit; any other single newline is a soft wrap and becomes a space.
    """
    units: list[str] = []
    current: list[str] = []

    def flush() -> None:
        if current:
            joined = " ".join(part.strip() for part in current).strip()
            if joined:
                units.append(joined)
            current.clear()

    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if not line.strip():
            flush()
            continue
        hard = bool(_BULLET.match(line) or _TABLE_ROW.match(line) or _HEADING.match(line))
        if (
            hard
            or (current and _TABLE_ROW.match(current[-1]))
            or (current and _HEADING.match(current[-1]))
        ):
            flush()
        current.append(line)
    flush()
    return units


_WINDOW = 64


def _word_before(text: str, end: int) -> str:
    """The longest run of word characters (``[\\w.\\-']``) ending at ``end``.

    Why a growing window instead of ``_WORD_BEFORE.search(text, 0, end)``: the regex search scans
    from the start of the paragraph for every candidate boundary, which is quadratic on a long
    soft-wrapped text (minutes for half a megabyte). The window only grows while the run reaches
    its left edge, so the work is proportional to the word's length and the result is identical.
    """
    width = _WINDOW
    while True:
        lo = max(0, end - width)
        match = _WORD_BEFORE.search(text, lo, end)
        if match is None:
            return ""
        if match.start(1) > lo or lo == 0:
            return match.group(1)
        width *= 4


def _is_boundary(text: str, start: int, punct: str, after: int) -> bool:
    """Decide whether the punctuation run ending before ``after`` ends a sentence."""
    if punct[0] in "!?\u2026" or len(punct) > 1 and punct != "..":
        nxt = text[after : after + 1]
        return not nxt or not nxt.islower()
    word = _word_before(text, start)
    low = word.lower().rstrip(".")
    nxt = text[after : after + 1]
    if not nxt:
        return True
    if nxt.islower() or nxt in ",;:":
        return False  # "e.g. the", "approx. 5" style continuations, or a lowercase follow-up
    if low in ABBREVIATIONS:
        return low in _TERMINAL_OK and nxt.isupper() and _next_word_starts_sentence(text, after)
    if len(word) == 1 and word.isalpha() and word.isupper():
        return False  # an initial: "J. Smith"
    if re.fullmatch(r"(?:[A-Za-z]\.)+[A-Za-z]", word):
        return _next_word_starts_sentence(text, after)  # dotted acronym such as "U.S"
    return True


_STARTERS = frozenset(
    """the a an this that these those it he she they we i in on at for as but
and or if when while after before however there his her their its our my some many most one two
several each every since during although though because so thus then also""".split()
)


def _next_word_starts_sentence(text: str, pos: int) -> bool:
    match = re.match(r"[\"'(\[]*([A-Za-z]+)", text[pos : pos + 40])
    return bool(match) and match.group(1).lower() in _STARTERS


def _split_unit(unit: str) -> list[str]:
    sentences: list[str] = []
    begin = 0
    for match in _CANDIDATE.finditer(unit):
        punct = match.group(1)
        after = match.end()
        if _is_boundary(unit, match.start(1), punct, after):
            sentence = unit[begin : match.end(2)].strip()
            if sentence:
                sentences.append(sentence)
            begin = after
    tail = unit[begin:].strip()
    if tail:
        sentences.append(tail)
    return sentences


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` in order, stripped, none empty."""
    out: list[str] = []
    for unit in split_units(text):
        if _TABLE_ROW.match(unit):
            out.append(unit)
            continue
        out.extend(_split_unit(unit))
    return out
