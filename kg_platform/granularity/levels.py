"""MoG multi-granularity levels (MoG paper): level g = two adjacent level-(g-1) chunks.

Built per section (never across sections or sources): the level-1 chunks of one section are
paired left to right, an odd trailing chunk is promoted alone, and this repeats up to ``levels`` (``segment.levels``).
Every level therefore exists for every section that has text, so ``P_g(c)`` (the level-g chunk
containing a level-1 chunk c) is always defined, which MoG's two-step selection relies on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["LevelChunk", "build_levels", "JOINER"]

#: How a parent's text is made from its children's texts.
JOINER = "\n"


@dataclass
class LevelChunk:
    level: int
    ord: int  # position within (section, level)
    text: str
    tokens: int
    kind: str = "text"
    children: list[int] = field(default_factory=list)  # ords of the level-(g-1) children
    page_start: int | None = None
    page_end: int | None = None


def _merge(items: Sequence[LevelChunk], level: int) -> list[LevelChunk]:
    out: list[LevelChunk] = []
    for i in range(0, len(items), 2):
        group = list(items[i : i + 2])
        pages = [p for c in group for p in (c.page_start, c.page_end) if p is not None]
        kinds = {c.kind for c in group}
        out.append(
            LevelChunk(
                level=level,
                ord=len(out),
                text=JOINER.join(c.text for c in group),
                tokens=sum(c.tokens for c in group),
                kind=kinds.pop() if len(kinds) == 1 else "text",
                children=[c.ord for c in group],
                page_start=min(pages) if pages else None,
                page_end=max(pages) if pages else None,
            )
        )
    return out


def build_levels(level1: Sequence[LevelChunk], levels: int) -> list[list[LevelChunk]]:
    """All levels 1..``levels`` of one section; ``result[g-1]`` is level g."""
    if levels < 1:
        raise ValueError("levels must be at least 1")
    if not level1:
        return [[] for _ in range(levels)]
    built = [list(level1)]
    for g in range(2, levels + 1):
        built.append(_merge(built[-1], g))
    return built
