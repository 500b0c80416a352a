"""Answers with numbered citations: the context is shown as ``[1] ... [n]``, the LLM cites the
numbers it used, and every passage becomes a :class:`Citation` (``cited`` marks the ones the
answer refers to)."""

from __future__ import annotations

import re

from kg_platform.reasoning.types import Citation, Evidence

_REF = re.compile(r"\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]")


def cited_numbers(*texts: str) -> set[int]:
    """Numbers referenced as ``[2]`` or ``[1, 3]`` in the given texts."""
    found: set[int] = set()
    for text in texts:
        for group in _REF.findall(text or ""):
            found.update(int(x) for x in group.split(","))
    return found


def citations_for(context: list[Evidence], *texts: str) -> list[Citation]:
    """One citation per context passage, numbered as the prompt numbered them."""
    used = cited_numbers(*texts)
    return [
        Citation(
            n=i,
            chunk_id=ev.chunk_id,
            source_title=ev.source_title,
            source_uri=ev.source_uri,
            section=ev.section,
            page=ev.page,
            cited=i in used,
            quote=" ".join(ev.text.split())[:160],
        )
        for i, ev in enumerate(context, 1)
    ]
