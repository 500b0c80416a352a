"""MoGG pieces (MoGG, in the MoG paper): one or two sentences, never across a level-1 chunk.

A sentence shorter than ``min_tokens`` joins its successor (inside the same chunk), so a piece is
one sentence or two; a short last sentence with no successor stays alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kg_platform.segmenting.fixed import Unit

__all__ = ["PieceSpec", "make_pieces"]


@dataclass(frozen=True)
class PieceSpec:
    text: str
    tokens: int
    sentences: tuple[int, ...]  # distinct source-level sentence indexes, ascending


def make_pieces(units: Sequence[Unit], min_tokens: int, joiner: str = " ") -> list[PieceSpec]:
    """``joiner`` must be the one the chunk's text uses, so a piece's text is a substring of it."""
    pieces: list[PieceSpec] = []
    i = 0
    while i < len(units):
        group = [units[i]]
        if units[i].tokens < min_tokens and i + 1 < len(units):
            group.append(units[i + 1])
        i += len(group)
        indexes = tuple(sorted({u.index for u in group}))
        pieces.append(
            PieceSpec(
                joiner.join(u.text for u in group),
                sum(u.tokens for u in group) + len(group) - 1,
                indexes,
            )
        )
    return pieces
