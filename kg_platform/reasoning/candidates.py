"""Atomic-question candidates for knowledge-aware decomposition (PIKE-RAG paper).

Line 4 of Algorithm 1 looks up, for every proposed sub-question at once, the top-K atomic
questions of the knowledge base with cosine >= delta, and keeps those whose chunk is not yet in
the context. When that yields nothing, the reference code falls back twice: (1) the same lookup
with the original question, then (2) chunks retrieved directly with the original question, each
carrying its best-matching atomic question. Only when all three are empty does the loop stop with
"no candidate >= delta".

Algorithm 2 needs the near misses too (cosine in [delta', delta)), so :meth:`via_atoms` takes the
threshold and K as arguments and reports every score.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from kg_platform.graph.params import vector_param
from kg_platform.graph.corpus_indexes import own_prefix

if TYPE_CHECKING:
    from kg_platform.embedding import Embedder
    from kg_platform.graph import GraphClient


@dataclass
class ContextCandidate:
    """An atomic question (or, on fallback 2, a bare chunk) that could join the context."""

    chunk_id: str
    chunk_text: str
    cos: float
    atom_id: str | None = None
    atom: str | None = None
    proposal: str | None = None  # the proposal (or the original question) that found it
    path: str = "atom"  # 'atom' | 'atom-question' (fallback 1) | 'chunk' (fallback 2)

    @property
    def label(self) -> str:
        """What the selector reads: the atomic question, or the chunk opening when there is none."""
        return self.atom or self.chunk_text[:200]

    def to_dict(self) -> dict:
        return {
            "chunk_id": self.chunk_id,
            "atom_id": self.atom_id,
            "atom": self.atom,
            "proposal": self.proposal,
            "cos": round(self.cos, 4),
            "path": self.path,
        }


class CandidateSource(Protocol):
    """Where candidates come from; the graph in production, anything with this shape in tests."""

    def via_atoms(
        self, queries: list[str], chosen: set[str], *, k: int, delta: float, path: str = "atom"
    ) -> list[ContextCandidate]: ...

    def via_chunks(
        self, query: str, chosen: set[str], *, k: int, delta: float
    ) -> list[ContextCandidate]: ...


class GraphCandidates:
    """Candidates from the ``atomic_question_embedding`` and chunk vector indexes of one corpus."""

    #: how many index hits to fetch per wanted hit, so a corpus filter still leaves K
    FETCH_FACTOR = 5

    def __init__(
        self,
        graph: "GraphClient",
        embedder: "Embedder",
        corpus: str | None,
        chunk_index: str = "chunk_embedding_l1",
    ) -> None:
        self.graph = graph
        self.embedder = embedder
        self.corpus = corpus
        self.chunk_index = chunk_index
        self._vectors: dict[str, list[float]] = {}

    def vector(self, text: str) -> list[float]:
        """The text's embedding, computed once per run (proposals repeat across rounds)."""
        if text not in self._vectors:
            self._vectors[text] = vector_param(self.embedder.embed([text])[0])
        return self._vectors[text]

    def vectors(self, texts: list[str]) -> list[list[float]]:
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if missing:
            for text, vec in zip(missing, self.embedder.embed(missing)):
                self._vectors[text] = vector_param(vec)
        return [self._vectors[t] for t in texts]

    def _fetch(self, k: int) -> int:
        return k * self.FETCH_FACTOR if self.corpus else k

    def via_atoms(
        self, queries: list[str], chosen: set[str], *, k: int, delta: float, path: str = "atom"
    ) -> list[ContextCandidate]:
        if not queries:
            return []
        proposals = [
            {"i": i, "text": q, "vec": v}
            for i, (q, v) in enumerate(zip(queries, self.vectors(queries)))
        ]
        rows = self.graph.read(
            "reasoning/atom_candidates",
            ix=own_prefix(self.graph, self.corpus),
            proposals=proposals,
            k=k,
            k_fetch=self._fetch(k),
            delta=delta,
            corpus=self.corpus,
            chosen=sorted(chosen),
        )
        return dedupe_atoms(
            [
                ContextCandidate(
                    chunk_id=r["chunk_id"],
                    chunk_text=r["text"] or "",
                    cos=float(r["cos"]),
                    atom_id=r["atom_id"],
                    atom=r["atom"],
                    proposal=r["proposal"],
                    path=path,
                )
                for r in rows
            ]
        )

    def via_chunks(
        self, query: str, chosen: set[str], *, k: int, delta: float
    ) -> list[ContextCandidate]:
        rows = self.graph.read(
            "reasoning/chunk_candidates",
            index=own_prefix(self.graph, self.corpus) + self.chunk_index,
            vec=self.vector(query),
            k=k,
            k_fetch=self._fetch(k),
            delta=delta,
            corpus=self.corpus,
            chosen=sorted(chosen),
        )
        return [
            ContextCandidate(
                chunk_id=r["chunk_id"],
                chunk_text=r["text"] or "",
                cos=float(r["cos"]),
                atom_id=r["atom_id"],
                atom=r["atom"],
                proposal=query,
                path="chunk",
            )
            for r in rows
        ]


def dedupe_atoms(candidates: list[ContextCandidate]) -> list[ContextCandidate]:
    """One entry per atomic question (several proposals can find it), keeping its best score."""
    best: dict[tuple[str | None, str], ContextCandidate] = {}
    for cand in candidates:
        key = (cand.atom_id, cand.chunk_id)
        if key not in best or cand.cos > best[key].cos:
            best[key] = cand
    return sorted(best.values(), key=lambda c: (-c.cos, c.atom_id or "", c.chunk_id))


def find_candidates(
    source: CandidateSource,
    proposals: list[str],
    question: str,
    chosen: set[str],
    *,
    k: int,
    delta: float,
    fallbacks: bool = True,
) -> list[ContextCandidate]:
    """Algorithm 1 line 4 with the reference code's two fallbacks (see the module docstring)."""
    found = source.via_atoms(proposals, chosen, k=k, delta=delta, path="atom")
    if found or not fallbacks:
        return found
    found = source.via_atoms([question], chosen, k=k, delta=delta, path="atom-question")
    if found:
        return found
    return source.via_chunks(question, chosen, k=k, delta=delta)
