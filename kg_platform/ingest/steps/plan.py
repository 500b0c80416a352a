"""Step 3, segment and plan: a :class:`~kg_platform.ingest.steps.parse.SourceInput` to the rows
the writer stores, the pure half of ingestion.

``plan_source`` turns a :class:`SourceInput` into a :class:`~kg_platform.ingest.rows.SourcePlan`
of typed rows: it runs segmentation (sentences -> level-1 chunks through the configured chunker
and the paragraph packing of :mod:`kg_platform.segmenting.paragraphs`), MoG levels per section
and MoGG pieces per level-1 chunk, and assigns content-derived ids. It does no I/O, so every
structural rule (doubling levels, pieces inside one chunk, sentence indexes) is unit-testable
without Neo4j or the embedder. ``pipeline_signature`` is what the stored graph depends on besides
a source's bytes (skip-by-hash compares it).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kg_platform.embedding.base import has_token_states
from kg_platform.errors import EmptyDocument, SourceTooLarge
from kg_platform.granularity.levels import LevelChunk, build_levels
from kg_platform.granularity.pieces import PIECE_RULES_VERSION, PieceSpec, make_pieces
from kg_platform.ingest.ids import make_id, source_id
from kg_platform.ingest.rows import (
    ChunkRow,
    NextRow,
    PartOfRow,
    PieceRow,
    SectionRow,
    SourcePlan,
    SourceRow,
)
from kg_platform.ingest.steps.parse import SectionInput, SourceInput
from kg_platform.segmenting.chunker import Chunker
from kg_platform.segmenting.paragraphs import level1_chunks

__all__ = [
    "SourcePlan",
    "embedder_pipeline",
    "pipeline_signature",
    "plan_source",
    "plan_with_settings",
]


def embedder_pipeline(settings: Any, embedder: Any, *, parser_version: str | None = None) -> str:
    """:func:`pipeline_signature` for the embedder actually used (its model and quantisation)
    and, for sources parsed from files, the parser's version."""
    return pipeline_signature(
        settings,
        embedder.model_name,
        str(getattr(embedder, "quantize", None) or "none"),
        late_pieces=has_token_states(embedder),
        parser_version=parser_version,
    )


def pipeline_signature(
    settings: Any,
    model_name: str,
    quantize: str = "none",
    *,
    late_pieces: bool = True,
    parser_version: str | None = None,
) -> str:
    """What the stored graph of a source depends on besides its bytes; a change re-ingests.

    ``quantize`` is the embedder's own (int8 vectors differ from fp32 ones, so switching
    ``KGP_EMBEDDING__QUANTIZE`` must re-embed); it is taken from the embedder actually used, not
    from the settings, because a caller may pass its own embedder. The default choices (fp32,
    level-1 vectors from the model) add nothing to the string, so graphs stored before these two
    parts existed are not re-ingested for nothing. Piece vectors are the exception: separate ones
    (the earlier default) add nothing, so older graphs match when a user keeps them, and late
    chunking, the default now, adds ``|pv=late``, so a corpus stored with separate vectors
    is re-embedded once, at its next ingestion, rather than mixing the two kinds. ``late_pieces``
    says whether the embedder can pool pieces at all (it needs token states; the
    sentence-transformers provider has none and embeds each piece on its own): without it the
    string records separate pieces, which is what is stored. The piece rules' version
    (``|pc=2``: lists and tables kept together) is always there: stored pieces made by older rules
    must be re-split.
    Whole paragraphs in level-1 chunks (``segment.paragraphs = "keep"``, the default) add
    ``|para=keep``, so a graph chunked across paragraph breaks (``pack``) is re-chunked when the
    setting changes to ``keep``; ``pack`` adds nothing, so it matches graphs stored without the
    part.
    ``parser_version`` (``|parse=N``; :data:`kg_platform.parsing.PARSER_VERSION` for files read by
    the built-in parsers) makes a parser change re-parse files whose bytes did not change; sources
    that are not parsed from files (QA passages) pass none and add nothing.
    """
    seg, ing = settings.segment, settings.tuning.ingest
    signature = (
        f"v1|{seg.segmenter}|{seg.chunk_tokens}|{seg.levels}|"
        f"{settings.tuning.segment.min_sentence_tokens}|"
        f"{ing.hard_split_factor}|{ing.embed_higher_levels}|{model_name}"
        f"|pc={PIECE_RULES_VERSION}"
    )
    if seg.paragraphs != "pack":
        signature += f"|para={seg.paragraphs}"
    if ing.level1_vectors != "model":
        signature += f"|l1={ing.level1_vectors}"
    if getattr(ing, "piece_vectors", "separate") != "separate" and late_pieces:
        signature += f"|pv={ing.piece_vectors}"
    if quantize and quantize != "none":
        signature += f"|q={quantize}"
    if parser_version:
        signature += f"|parse={parser_version}"
    return signature


def plan_with_settings(inp: SourceInput, chunker: Chunker, settings: Any) -> SourcePlan:
    """:func:`plan_source` with the budgets and limits of ``settings`` (the platform's
    :class:`~kg_platform.config.Settings`): the one place both engines plan a source."""
    seg, ing = settings.segment, settings.tuning.ingest
    return plan_source(
        inp,
        chunker,
        budget=seg.chunk_tokens,
        levels=seg.levels,
        min_piece_tokens=settings.tuning.segment.min_sentence_tokens,
        hard_factor=ing.hard_split_factor,
        max_tokens=ing.max_source_tokens,
        keep_paragraphs=seg.paragraphs == "keep",
    )


def plan_source(
    inp: SourceInput,
    chunker: Chunker,
    *,
    budget: int,
    levels: int,
    min_piece_tokens: int,
    hard_factor: float = 2.0,
    max_tokens: int | None = None,
    keep_paragraphs: bool = False,
) -> SourcePlan:
    """Plan one source: its sections, their chunks of every MoG level and the level-1 chunks'
    pieces, with content-derived ids and the edges between them.

    Raises :class:`SourceTooLarge` past ``max_tokens`` tokens of text and :class:`EmptyDocument`
    when no section holds any text."""
    sid = source_id(inp.corpus, inp.uri)
    draft = _Draft(inp.corpus, sid, chunker.name)
    counter = [0]  # source-level sentence index, continued across sections
    pages: dict[int, int | None] = {}
    for ord_, sec in enumerate(inp.sections):
        section = draft.add_section(ord_, sec)
        level1 = level1_chunks(
            sec.segments, chunker, budget, hard_factor, counter, pages, keep_paragraphs
        )
        if not level1:
            continue
        draft.tokens += sum(c.tokens for c, _ in level1)
        _check_size(inp.uri, draft.tokens, max_tokens)
        level1_ids = draft.add_levels(section.id, build_levels([c for c, _ in level1], levels))
        for (chunk, units), cid in zip(level1, level1_ids):
            joiner = " " if chunk.kind == "text" else "\n"
            draft.add_pieces(cid, make_pieces(units, min_piece_tokens, joiner))
    if not draft.chunks:
        raise EmptyDocument(
            f"{inp.uri} holds no text to ingest",
            hint="check that the file is not empty or image-only",
        )
    return draft.finish(_source_row(inp, sid, chunker.name, draft.tokens))


def _check_size(uri: str, tokens: int, max_tokens: int | None) -> None:
    """Stop planning a source once its text passes the configured bound."""
    if max_tokens is not None and tokens > max_tokens:
        raise SourceTooLarge(
            f"{uri} has more than {max_tokens} tokens of text",
            hint="split the file (the limit is tuning ingest.max_source_tokens)",
        )


def _source_row(inp: SourceInput, sid: str, segmenter: str, tokens: int) -> SourceRow:
    return SourceRow(
        id=sid,
        corpus=inp.corpus,
        uri=inp.uri,
        title=inp.title,
        mime=inp.mime,
        sha256=inp.sha256,
        bytes=inp.bytes,
        pages=inp.pages,
        segmenter=segmenter,
        pipeline=inp.pipeline,
        tokens=tokens,
    )


@dataclass
class _Draft:
    """The rows of one source as :func:`plan_source` adds them, section by section."""

    corpus: str
    source_id: str
    segmenter: str
    tokens: int = 0
    sections: list[SectionRow] = field(default_factory=list)
    chunks: list[ChunkRow] = field(default_factory=list)
    part_of: list[PartOfRow] = field(default_factory=list)
    chunk_next: list[NextRow] = field(default_factory=list)
    pieces: list[PieceRow] = field(default_factory=list)
    piece_next: list[NextRow] = field(default_factory=list)
    children: dict[str, list[str]] = field(default_factory=dict)

    def add_section(self, ord_: int, sec: SectionInput) -> SectionRow:
        """The section's row; its parent is the source or an earlier section (depth-first)."""
        sec_id = make_id("section", self.source_id, ord_, sec.path)
        parent_id = self.source_id if sec.parent is None else self.sections[sec.parent].id
        row = SectionRow(
            id=sec_id,
            parent_id=parent_id,
            corpus=self.corpus,
            source_id=self.source_id,
            title=sec.title,
            level=sec.level,
            ord=ord_,
            page=sec.page,
            path=sec.path,
        )
        self.sections.append(row)
        return row

    def add_levels(self, section_id: str, levels: Sequence[Sequence[LevelChunk]]) -> list[str]:
        """Chunk rows of every MoG level of one section, with their ``PART_OF`` edges to the
        level above and ``NEXT`` edges within a level; returns the level-1 chunk ids."""
        ids_by_level: list[list[str]] = []
        for g, level in enumerate(levels, start=1):
            ids = [make_id("chunk", self.source_id, section_id, g, c.ord, c.text) for c in level]
            ids_by_level.append(ids)
            for c, cid in zip(level, ids):
                self.chunks.append(self._chunk_row(cid, section_id, g, c))
                if g > 1:
                    kids = [ids_by_level[g - 2][o] for o in c.children]
                    self.children[cid] = kids
                    self.part_of.extend(PartOfRow(child=k, parent=cid) for k in kids)
            self.chunk_next.extend(NextRow(a, b) for a, b in zip(ids, ids[1:]))
        return ids_by_level[0]

    def _chunk_row(self, cid: str, section_id: str, level: int, c: LevelChunk) -> ChunkRow:
        return ChunkRow(
            id=cid,
            corpus=self.corpus,
            source_id=self.source_id,
            section_id=section_id,
            level=level,
            ord=c.ord,
            text=c.text,
            tokens=c.tokens,
            kind=c.kind,
            segmenter=self.segmenter,
            page_start=c.page_start,
            page_end=c.page_end,
        )

    def add_pieces(self, chunk_id: str, specs: Iterable[PieceSpec]) -> None:
        """Piece rows of one level-1 chunk, numbered and chained in document order."""
        for spec in specs:
            doc_ord = len(self.pieces)
            pid = make_id("piece", self.source_id, doc_ord, spec.text)
            if self.pieces:
                self.piece_next.append(NextRow(self.pieces[-1].id, pid))
            self.pieces.append(
                PieceRow(
                    id=pid,
                    corpus=self.corpus,
                    source_id=self.source_id,
                    chunk_id=chunk_id,
                    text=spec.text,
                    tokens=spec.tokens,
                    doc_ord=doc_ord,
                    sentences=tuple(spec.sentences),
                )
            )

    def finish(self, source: SourceRow) -> SourcePlan:
        return SourcePlan(
            source=source,
            sections=self.sections,
            chunks=self.chunks,
            part_of=self.part_of,
            chunk_next=self.chunk_next,
            pieces=self.pieces,
            piece_next=self.piece_next,
            tokens=self.tokens,
            children=self.children,
        )
