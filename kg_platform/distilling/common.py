"""What every distillation step shares: content ids, name normalisation, pending-chunk batches.

Resumability: each step stamps the chunks it finished with a marker property holding the
prompt's ``name@version`` (``atomic_v``, ``entities_v``, ``tags_v``). Pending work is every chunk
whose marker differs, so an interrupted run resumes, an unchanged chunk is never paid for twice,
and bumping a prompt's version re-distils exactly what it touches. The LLM response cache makes a
repeated call free even when a marker was lost. :func:`replace_chunk_output` is the one way a
step stores a batch: clear, write and mark in one transaction.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kg_platform.ids import make_id as make_id  # re-exported: the distillation steps mint ids

if TYPE_CHECKING:  # at run time only where used: the NLP parsing child needs no Neo4j driver
    from neo4j import ManagedTransaction

    from kg_platform.graph import GraphClient

MARKERS = {"atomic": "atomic_v", "entities": "entities_v", "tags": "tags_v"}


_PUNCT = re.compile(r"[^\w\s]")
_SPACE = re.compile(r"\s+")
_LEADING_ARTICLE = re.compile(r"^(the|a|an)\s+")


def normalise_name(name: str) -> str:
    """Entity/tag key: accents folded, case folded, punctuation dropped, leading article dropped.

    ``"The Beatles"``, ``"the beatles"`` and ``"Beatles"`` share a key; ``"U.S.A."`` -> ``"usa"``.
    """
    text = unicodedata.normalize("NFKD", name)
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).casefold()
    text = _PUNCT.sub(lambda m: "" if m.group(0) in ".'\u2019" else " ", text)
    text = _SPACE.sub(" ", text).strip()
    return _LEADING_ARTICLE.sub("", text) or text


@dataclass
class PendingChunk:
    id: str
    text: str
    source_id: str
    level: int
    source_title: str
    section_path: str

    @property
    def title(self) -> str:
        """What the prompt shows as the chunk's title (section path, else the source title)."""
        return self.section_path or self.source_title


def pending_chunks(
    graph: GraphClient,
    *,
    corpus: str,
    levels: list[int],
    step: str,
    version: str,
    source_ids: list[str] | None = None,
    batch: int = 32,
) -> Iterator[list[PendingChunk]]:
    """Batches of chunks still lacking ``step`` at ``version``. The caller marks each batch done
    before asking for the next, so the query always returns what is left."""
    marker = MARKERS[step]
    seen: set[str] = set()
    while True:
        recs = graph.read(
            "distill/pending_chunks",
            corpus=corpus,
            levels=levels,
            marker=marker,
            version=version,
            source_ids=source_ids,
            limit=batch,
            exclude=sorted(seen),
        )
        rows = [
            PendingChunk(
                r["id"],
                r["text"] or "",
                r["source_id"],
                r["level"],
                r["source_title"],
                r["section_path"],
            )
            for r in recs
        ]
        rows = [r for r in rows if r.id not in seen]
        if not rows:
            return
        seen.update(r.id for r in rows)
        yield rows


#: The query that removes a step's previous output from a set of chunks (``$ids``).
CLEAR_QUERIES = {
    "atomic": "distill/clear_chunk_atoms",
    "entities": "distill/clear_chunk_entities",
    "tags": "distill/clear_chunk_tags",
}


def replace_chunk_output(
    graph: GraphClient,
    *,
    step: str,
    version: str,
    chunk_ids: Sequence[str],
    writes: Sequence[tuple[str, Sequence[dict[str, Any]]]],
    corpus: str,
) -> None:
    """Clear the chunks' previous ``step`` output, write the new one and mark them done at
    ``version``, all in one transaction.

    Why one transaction: a chunk is marked done only together with the output it was marked
    for, so a crash leaves it either untouched (and pending) or fully re-distilled, never
    cleared without its new facts. ``writes`` are ``(query name, rows)`` pairs run in order;
    one with no rows is skipped. Each is given ``$ix``, ``corpus``'s key prefix, for the label
    its own indexes cover (:mod:`kg_platform.graph.corpus_indexes`).
    """
    from kg_platform.graph.corpus_indexes import corpus_prefix, ensure_corpus_indexes
    from kg_platform.graph.cypher import cypher

    ids = list(chunk_ids)
    marks = [{"id": i, "marks": {MARKERS[step]: version}} for i in ids]
    ensure_corpus_indexes(graph, corpus)
    ix = corpus_prefix(corpus)

    def work(tx: ManagedTransaction) -> None:
        tx.run(cypher(CLEAR_QUERIES[step]), ids=ids).consume()
        for name, rows in writes:
            if rows:
                tx.run(cypher(name), rows=list(rows), ix=ix).consume()
        tx.run(cypher("distill/mark_chunks"), rows=marks).consume()

    graph.in_transaction(work)


@dataclass
class StepReport:
    step: str
    chunks: int = 0
    written: int = 0  # questions / entities / tags written
    relations: int = 0
    failed: list[str] = field(default_factory=list)  # chunk ids whose LLM output was unusable
    errors: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)  # seconds per phase, when measured

    def to_dict(self) -> dict:
        return {
            **(
                {"timings": {k: round(v, 2) for k, v in self.timings.items()}}
                if self.timings
                else {}
            ),
            "step": self.step,
            "chunks": self.chunks,
            "written": self.written,
            "relations": self.relations,
            "failed": len(self.failed),
            "errors": self.errors[:5],
        }
