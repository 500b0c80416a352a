"""Where the lists and tables are in a stream of sentence units.

A *list run* is a lead-in sentence ending with ``:`` followed by one or more list items, or two or
more consecutive list items, or two or more consecutive table rows. Level-1 packing keeps a run
in one chunk when it fits the budget, and pieces keep it together (up to a cap), because a list
cut into pairs of items ("- PowerPoint - Word") says neither what it lists nor that it is one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal, Protocol

__all__ = ["list_spans", "unit_kind"]


class _TextUnit(Protocol):
    """What a run needs of a unit (``segmenting.fixed.Unit`` has it; no import, no cycle)."""

    @property
    def text(self) -> str: ...


# Bullets, "1." / "1)" / "(1)", and letter items "a." / "a)" / "(a)" / "A)"; not "A." (an initial:
# "J. R. R. Tolkien wrote ..." is a sentence, not a list item).
_LIST_ITEM = re.compile(
    r"^\s*(?:[-*+\u2022\u2023\u25e6\u2043\u2219]|\(?\d{1,3}[.)]|\(?[a-z][.)]|\(?[A-Z]\))\s+\S"
)
_TABLE_ROW = re.compile(r"^\s*\|")


def unit_kind(text: str) -> Literal["row", "item", "text"]:
    if _TABLE_ROW.match(text):
        return "row"
    if _LIST_ITEM.match(text):
        return "item"
    return "text"


def list_spans(units: Sequence[_TextUnit]) -> list[tuple[int, int]]:
    """``[start, end)`` index spans of the list runs in ``units``, in order, not overlapping."""
    kinds = [unit_kind(u.text) for u in units]
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(units):
        lead_in = kinds[i] == "text" and units[i].text.rstrip().endswith(":")
        start = i + 1 if lead_in else i
        kind = kinds[start] if start < len(units) else "text"
        end = start
        while kind != "text" and end < len(units) and kinds[end] == kind:
            end += 1
        items = end - start
        if items >= 2 or (lead_in and items >= 1):
            spans.append((i, end))
            i = end
        else:
            i += 1
    return spans
