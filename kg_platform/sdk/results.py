"""Typed results of :class:`~kg_platform.sdk.platform.KnowledgePlatform` verbs not owned by a
feature module (ingestion reports, answers and job results are declared where they are built)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kg_platform.retrieval.base import RetrievedItem


@dataclass
class Retrieval:
    """One retrieval: the ranked items and, when it was recorded, the stored answer's id.

    The answer id travels with the result (not on the platform object) so concurrent callers
    never read each other's ids.
    """

    query: str
    strategy: str
    select: str
    items: list["RetrievedItem"] = field(default_factory=list)
    answer_id: str | None = None
    #: the strategy that ran (``auto`` names the one it chose) and, for ``auto``, why
    ran: str | None = None
    why: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.query,
            "strategy": self.strategy,
            "ran": self.ran,
            "why": self.why,
            "select": self.select,
            "answer_id": self.answer_id,
            "items": [it.to_dict() for it in self.items],
        }


@dataclass(frozen=True)
class CorpusInfo:
    """One corpus of the graph and how many nodes of each kind it holds.

    ``chunks`` counts every granularity level (``:Chunk``, levels 1..n together).
    """

    name: str
    sources: int
    sections: int
    chunks: int
    pieces: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class SourceOutline:
    """One source as stored: its sections in document order, each a dict with ``id``,
    ``title``, ``path``, ``level``, ``page`` and ``chunks`` (dicts with ``id``, ``text``,
    ``tokens``, ``page_start``) of the requested MoG level, in order."""

    id: str
    title: str | None
    uri: str | None
    corpus: str
    pages: int | None
    tokens: int | None
    sections: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
