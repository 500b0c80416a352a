"""Sentence-complete fixed-size chunking: the level-1 chunks of MoG (MoG paper).

Sentences are packed greedily, in order, into chunks of at most ``budget`` tokens and never cut,
so every chunk boundary is a sentence boundary. A sentence longer than the budget becomes a chunk
of its own; only a sentence longer than ``hard_factor * budget`` is cut, at budget-sized token
windows, because the embedder truncates long inputs anyway and a 2,000-token "sentence" (a table
dump, a run-on list) would otherwise make one unretrievable chunk.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from kg_platform.segmenting.lists import list_spans
from kg_platform.tokens import count_tokens_batch, encoding

__all__ = [
    "Unit",
    "make_units",
    "pack_units",
    "join_units",
    "split_long_units",
    "table_header",
    "with_header",
]


@dataclass(frozen=True)
class Unit:
    """One sentence (or one cut part of an over-long sentence) with its source-level index."""

    text: str
    tokens: int
    index: int  # sentence index within the source's text; parts of a cut sentence share it


def make_units(sentences: Sequence[str], first_index: int = 0) -> list[Unit]:
    counts = count_tokens_batch(list(sentences)) if sentences else []
    return [Unit(text, n, first_index + i) for i, (text, n) in enumerate(zip(sentences, counts))]


def split_long_units(units: Sequence[Unit], budget: int, hard_factor: float = 2.0) -> list[Unit]:
    """Cut every unit above ``hard_factor * budget`` tokens into ``budget``-token parts."""
    limit = int(budget * hard_factor)
    out: list[Unit] = []
    for unit in units:
        if unit.tokens <= limit:
            out.append(unit)
            continue
        ids = encoding().encode_ordinary(unit.text)
        for start in range(0, len(ids), budget):
            part = encoding().decode(ids[start : start + budget]).strip()
            if part:
                out.append(Unit(part, len(ids[start : start + budget]), unit.index))
    return out


def pack_units(units: Sequence[Unit], budget: int) -> list[list[Unit]]:
    """Greedy, order-keeping packing of whole units into chunks of at most ``budget`` tokens.

    The joining space costs about one token; it is counted so that a chunk's measured token count
    stays within the budget in practice. A list or table run (``segmenting.lists``) that fits the
    budget but not the rest of the current chunk starts a new chunk, so a list is not cut in two
    chunks (nor its items parted from their lead-in) when it need not be.
    """
    if budget <= 0:
        raise ValueError("chunk budget must be positive")
    run_end = dict(list_spans(units))
    chunks: list[list[Unit]] = []
    current: list[Unit] = []
    used = 0
    for i, unit in enumerate(units):
        end = run_end.get(i)
        if end is not None and current:
            run_alone = sum(u.tokens for u in units[i:end]) + (end - i - 1)
            if run_alone <= budget and used + 1 + run_alone > budget:
                chunks.append(current)
                current, used = [], 0
        cost = unit.tokens + (1 if current else 0)
        if current and used + cost > budget:
            chunks.append(current)
            current, used = [], 0
            cost = unit.tokens
        current.append(unit)
        used += cost
    if current:
        chunks.append(current)
    return chunks


_DELIMITER_ROW = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?$")


def table_header(units: Sequence[Unit]) -> list[Unit]:
    """A Markdown table's header row and its delimiter row ("|---|"), when it has them."""
    if len(units) >= 3 and units[0].text.startswith("|") and _DELIMITER_ROW.match(units[1].text):
        return [units[0], units[1]]
    return []


def with_header(group: Sequence[Unit], header: Sequence[Unit]) -> list[Unit]:
    """A part of a table cut at row boundaries, with the table's header rows in front when the
    part starts later in the table (so each chunk of a long table can be read alone; the rows
    themselves, and so the pieces, are unchanged)."""
    if not group or not header or group[0] in header:
        return list(group)
    return [*(u for u in header if u not in group), *group]


def join_units(units: Sequence[Unit], joiner: str) -> tuple[str, int]:
    """The units' texts joined, and their tokens (one token per join, as the packer counts)."""
    return joiner.join(u.text for u in units), sum(u.tokens for u in units) + len(units) - 1
