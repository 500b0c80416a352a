"""MoGG pieces (MoGG, in the MoG paper): one or two sentences, never across a level-1 chunk,
except that a list or a table stays together.

A sentence shorter than ``min_tokens`` joins its successor (inside the same chunk), so a piece is
one sentence or two; a short last sentence with no successor stays alone.

Lists and tables (rules version 2): pairing short units made pieces such as ``"- PowerPoint -
Word"``, which neither say what they list nor match a question about the list ("What file formats
can MarkItDown convert?" found none of the formats). A *run* is a lead-in sentence ending with
``:`` followed by list items, or two or more consecutive list items, or consecutive table rows.
A run is packed, in order, into pieces of at most ``list_tokens`` tokens (the lead-in goes with
the first of them), so a short list is one piece that reads as the passage it is. A single item
longer than the cap is a piece of its own, as any long sentence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kg_platform.segmenting.fixed import Unit
from kg_platform.segmenting.lists import list_spans

__all__ = ["PieceSpec", "make_pieces", "PIECE_RULES_VERSION", "LIST_PIECE_TOKENS"]

#: Enters the pipeline signature: a change of these rules re-splits stored sources.
PIECE_RULES_VERSION = 2
#: Default cap of a list or table piece (tokens): about a dozen short items with their lead-in.
LIST_PIECE_TOKENS = 96


@dataclass(frozen=True)
class PieceSpec:
    text: str
    tokens: int
    sentences: tuple[int, ...]  # distinct source-level sentence indexes, ascending


def _runs(units: Sequence[Unit]) -> list[tuple[bool, list[Unit]]]:
    """Split ``units`` into ``(is_list_run, units)`` stretches, in order."""
    out: list[tuple[bool, list[Unit]]] = []
    done = 0
    for start, end in list_spans(units):
        if start > done:
            out.append((False, list(units[done:start])))
        out.append((True, list(units[start:end])))
        done = end
    if done < len(units):
        out.append((False, list(units[done:])))
    return out


def _spec(group: Sequence[Unit], joiner: str) -> PieceSpec:
    return PieceSpec(
        joiner.join(u.text for u in group),
        sum(u.tokens for u in group) + len(group) - 1,
        tuple(sorted({u.index for u in group})),
    )


def _pair_short(units: Sequence[Unit], min_tokens: int, joiner: str) -> list[PieceSpec]:
    pieces: list[PieceSpec] = []
    i = 0
    while i < len(units):
        group = [units[i]]
        if units[i].tokens < min_tokens and i + 1 < len(units):
            group.append(units[i + 1])
        i += len(group)
        pieces.append(_spec(group, joiner))
    return pieces


def _pack_run(units: Sequence[Unit], cap: int, joiner: str) -> list[PieceSpec]:
    pieces: list[PieceSpec] = []
    group: list[Unit] = []
    size = 0
    for unit in units:
        if group and size + 1 + unit.tokens > cap:
            pieces.append(_spec(group, joiner))
            group, size = [], 0
        size += unit.tokens + (1 if group else 0)
        group.append(unit)
    if group:
        pieces.append(_spec(group, joiner))
    return pieces


def make_pieces(
    units: Sequence[Unit],
    min_tokens: int,
    joiner: str = " ",
    list_tokens: int = LIST_PIECE_TOKENS,
) -> list[PieceSpec]:
    """``joiner`` must be the one the chunk's text uses, so a piece's text is a substring of it."""
    pieces: list[PieceSpec] = []
    for is_list, run in _runs(units):
        if is_list:
            pieces.extend(_pack_run(run, list_tokens, joiner))
        else:
            pieces.extend(_pair_short(run, min_tokens, joiner))
    return pieces
