"""Paragraph packing: a section's segments into level-1 chunks (the MoG levels' first level).

Text runs go through the configured :class:`~kg_platform.segmenting.chunker.Chunker`; a table or
figure is one chunk of its own (cut at row boundaries only far over budget). With
``segment.paragraphs = "keep"`` whole paragraphs are kept together (see :func:`level1_chunks`).
No I/O: the ingestion's plan step (:mod:`kg_platform.ingest.steps.plan`) calls it per section.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kg_platform.granularity.levels import LevelChunk
from kg_platform.segmenting.chunker import Chunker
from kg_platform.segmenting.fixed import Unit, make_units, pack_units, split_long_units
from kg_platform.segmenting.fixed import join_units, table_header, with_header

__all__ = ["STRUCTURED", "Segment", "joined_tokens", "level1_chunks"]

#: segment kinds kept whole, one chunk each (never packed with text)
STRUCTURED = {"table", "figure"}


@dataclass
class Segment:
    """A run of sentences of one kind inside a section (text, or one table/figure)."""

    kind: str  # 'text' | 'table' | 'figure'
    sentences: list[str]
    page: int | None = None
    #: explicit source-level sentence index of each sentence (QA data: the dataset's own index;
    #: several split parts of one given sentence share it). None = numbered in reading order.
    indexes: list[int] | None = None


def level1_chunks(
    segments: Sequence[Segment],
    chunker: Chunker,
    budget: int,
    hard: float,
    counter: list[int],
    pages: dict[int, int | None],
    keep_paragraphs: bool = False,
) -> list[tuple[LevelChunk, list[Unit]]]:
    """Level-1 chunks of one section: text runs through the chunker, tables/figures alone.

    With ``keep_paragraphs`` (``segment.paragraphs = "keep"``) the chunker gets whole paragraphs
    (text segments): a paragraph that does not fit beside the ones before it starts a new run,
    and one longer than the budget is chunked alone. Why: a 128-token chunk holding the end of
    one paragraph and the start of the next spends a reader's budget on two half-topics; in
    papers, the unit a question's evidence comes in is the paragraph."""
    out: list[tuple[LevelChunk, list[Unit]]] = []
    stream: list[Unit] = []

    def units_of(seg: Segment) -> list[Unit]:
        units = make_units(seg.sentences, counter[0])
        counter[0] += len(units)
        if seg.indexes is not None:
            units = [Unit(u.text, u.tokens, i) for u, i in zip(units, seg.indexes, strict=True)]
        for u in units:
            pages[u.index] = seg.page
        return units

    def emit(groups: list[list[Unit]], kind: str, header: Sequence[Unit] = ()) -> None:
        for group in groups:
            if not group:
                continue
            pgs = [p for u in group if (p := pages.get(u.index)) is not None]
            text, tokens = join_units(with_header(group, header), " " if kind == "text" else "\n")
            out.append(
                (
                    LevelChunk(
                        1,
                        len(out),
                        text,
                        tokens,
                        kind,
                        page_start=min(pgs) if pgs else None,
                        page_end=max(pgs) if pgs else None,
                    ),
                    group,
                )
            )

    for seg in segments:
        if seg.kind in STRUCTURED:
            if stream:
                emit(chunker.chunk(stream), "text")
                stream = []
            units = units_of(seg)
            total = sum(u.tokens for u in units)
            # A table or figure is one chunk; only one far over budget is cut at row boundaries.
            groups = (
                [units]
                if total <= budget * hard
                else pack_units(split_long_units(units, budget, hard), budget)
            )
            emit(groups, seg.kind, table_header(units) if seg.kind == "table" else ())
        elif keep_paragraphs:
            paragraph = units_of(seg)
            if stream and joined_tokens(stream + paragraph) > budget:
                emit(chunker.chunk(stream), "text")
                stream = []
            stream.extend(paragraph)
            if joined_tokens(stream) > budget:  # a paragraph over budget: chunked on its own
                emit(chunker.chunk(stream), "text")
                stream = []
        else:
            stream.extend(units_of(seg))
    if stream:
        emit(chunker.chunk(stream), "text")
    return out


def joined_tokens(units: Sequence[Unit]) -> int:
    """Tokens of the units joined by spaces (about one token per join, as the packer counts)."""
    return sum(u.tokens for u in units) + max(len(units) - 1, 0)
