"""The typed rows one planned source contributes to the graph, from the planner to the writer.

One frozen row type per node kind (:class:`SourceRow`, :class:`SectionRow`, :class:`ChunkRow`,
:class:`PieceRow`) and per edge kind (:class:`PartOfRow`, :class:`NextRow`). A node row's fields
are the node's stored properties, except the links named in :data:`LINK_FIELDS` (they become
edges, not properties). Rows are immutable so the planner's output cannot drift between planning,
embedding and writing; vectors, which arrive after planning, live beside them in
:attr:`SourcePlan.vectors`. Everything here pickles, because the Ray engine ships plans between
processes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "ChunkRow",
    "LINK_FIELDS",
    "NextRow",
    "PartOfRow",
    "PieceRow",
    "SectionRow",
    "SourcePlan",
    "SourceRow",
]

#: Row fields that name another node (an edge's end), not a property of the row's own node.
LINK_FIELDS = frozenset({"parent_id"})


@dataclass(frozen=True, slots=True)
class SourceRow:
    """A ``Source`` node: one ingested file or QA paragraph."""

    id: str
    corpus: str
    uri: str
    title: str
    mime: str
    sha256: str
    bytes: int
    pages: int | None
    segmenter: str
    pipeline: str
    tokens: int

    @property
    def embedding_text(self) -> str:
        """What the source's vector is computed from: its title, else its uri."""
        return self.title or self.uri


@dataclass(frozen=True, slots=True)
class SectionRow:
    """A ``Section`` node; ``parent_id`` is its Source (a root section) or its parent Section."""

    id: str
    parent_id: str
    corpus: str
    source_id: str
    title: str
    level: int
    ord: int
    page: int | None
    path: str

    @property
    def embedding_text(self) -> str:
        """What the section's vector is computed from: its title path, else its title."""
        return self.path or self.title or ""


@dataclass(frozen=True, slots=True)
class ChunkRow:
    """A ``Chunk`` node of MoG level ``level`` (1 = the segmenter's chunks) in its section."""

    id: str
    corpus: str
    source_id: str
    section_id: str
    level: int
    ord: int
    text: str
    tokens: int
    kind: str
    segmenter: str
    page_start: int | None
    page_end: int | None


@dataclass(frozen=True, slots=True)
class PieceRow:
    """A MoGG ``Piece`` node inside one level-1 chunk; ``sentences`` are source-level indexes."""

    id: str
    corpus: str
    source_id: str
    chunk_id: str
    text: str
    tokens: int
    doc_ord: int
    sentences: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class PartOfRow:
    """A ``PART_OF`` edge from a chunk to the chunk one MoG level up that contains it."""

    child: str
    parent: str


@dataclass(frozen=True, slots=True)
class NextRow:
    """A ``NEXT`` edge between neighbours in reading order (two chunks of one level and section,
    or two pieces of one source)."""

    a: str
    b: str


@dataclass(slots=True)
class SourcePlan:
    """Everything one source contributes to the graph: the planner's rows, then their vectors.

    ``vectors`` maps a node row's id to its embedding; the embedder fills it, the writer reads it.
    """

    source: SourceRow
    sections: list[SectionRow]
    chunks: list[ChunkRow]  # all levels; level 1 are embedded directly
    part_of: list[PartOfRow]
    chunk_next: list[NextRow]
    pieces: list[PieceRow]
    piece_next: list[NextRow]
    tokens: int
    children: dict[str, list[str]] = field(default_factory=dict)  # chunk id -> child chunk ids
    vectors: dict[str, list[float]] = field(default_factory=dict)  # node id -> its embedding

    @property
    def embedded(self) -> bool:
        """Whether the embedder ran over this plan (a Ray worker's plan arrives embedded)."""
        return self.source.id in self.vectors

    @property
    def node_count(self) -> int:
        return 1 + len(self.sections) + len(self.chunks) + len(self.pieces)
