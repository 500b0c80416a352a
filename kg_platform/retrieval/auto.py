"""``auto``: the strategy chosen by the shape of what is searched.

No one strategy leads everywhere. On pools of short passages (multi-hop questions) ``mogg``
leads, because its hops gather neighbouring sentences across passages. Inside long documents
the strategies end within noise of each other once the rerank has run, and ``hybrid``, the
simplest, answers there. The lab's record has the measurements
(``lab/results/2026-11-27/default-path/``).

What tells the two kinds apart is known before the question is read: how many level-2 chunks
each source holds. Sources of a few chunks are passages; sources of dozens are documents. One
count over at most :data:`SHAPE_SAMPLE` sources decides (kept per retrieval context), so its
cost does not grow with the corpus, and nothing is fitted on anyone's corpus.
"""

from __future__ import annotations

import logging

from kg_platform.retrieval.base import (
    RetrievalContext,
    RetrievedItem,
    Strategy,
    get_strategy,
    register_strategy,
)

log = logging.getLogger(__name__)

#: level-2 chunks per source from which a scope counts as long documents (a QASPER paper holds
#: ~30, a HotpotQA paragraph 1)
DOCUMENT_CHUNKS_PER_SOURCE = 4.0
#: sources counted to tell passages from documents (a flat cost, whatever the corpus size)
SHAPE_SAMPLE = 50
FOR_DOCUMENTS = "hybrid"
FOR_PASSAGES = "mogg"
#: answers when the chosen strategy finds nothing (a corpus without the piece graph mogg walks)
FALLBACK = FOR_DOCUMENTS


def choose(sources: int, chunks: int) -> str:
    """The strategy for a scope of ``sources`` holding ``chunks`` level-2 chunks."""
    if sources == 0:
        return FOR_DOCUMENTS
    return FOR_DOCUMENTS if chunks / sources >= DOCUMENT_CHUNKS_PER_SOURCE else FOR_PASSAGES


class AutoStrategy:
    """``auto``: ``hybrid`` over long documents, ``mogg`` over short passages; ``hybrid`` also
    answers when ``mogg`` finds nothing (a graph without the piece graph it walks). The strategy
    that ran is in :attr:`chosen` (and each item's ``query`` names its Cypher)."""

    name = "auto"

    def __init__(self, ctx: RetrievalContext) -> None:
        self.ctx = ctx
        self._shapes: dict[tuple[str | None, tuple[str, ...] | None], str] = {}
        self._runners: dict[str, Strategy] = {}
        self.chosen: str | None = None
        self.last_plans: object = None

    def _choice(self) -> str:
        sources = tuple(sorted(self.ctx.sources)) if self.ctx.sources else None
        key = (self.ctx.corpus, sources)
        if key not in self._shapes:
            if sources is None:
                rows = self.ctx.graph.read(
                    "retrieval/scope_shape_corpus", corpus=self.ctx.corpus, sample=SHAPE_SAMPLE
                )
            else:
                rows = self.ctx.graph.read(
                    "retrieval/scope_shape_sources", sources=list(sources), sample=SHAPE_SAMPLE
                )
            row = rows[0] if rows else {"sources": 0, "chunks": 0}
            self._shapes[key] = choose(int(row["sources"]), int(row["chunks"]))
            log.debug("auto: %s for %s (%s)", self._shapes[key], key, row)
        return self._shapes[key]

    def retrieve(self, query: str, k: int) -> list[RetrievedItem]:
        chosen = self._choice()
        items = self._run(chosen, query, k)
        if not items and chosen != FALLBACK:
            # e.g. a graph built without pieces, where mogg has nothing to hop over
            log.info("auto: %s found nothing; %s answers", chosen, FALLBACK)
            chosen = FALLBACK
            items = self._run(chosen, query, k)
        self.chosen = chosen
        return items

    def _run(self, name: str, query: str, k: int) -> list[RetrievedItem]:
        if name not in self._runners:
            self._runners[name] = get_strategy(name, self.ctx)
        runner = self._runners[name]
        items = list(runner.retrieve(query, k))
        self.last_plans = getattr(runner, "last_plans", None)
        return items


@register_strategy(
    "auto",
    "hybrid over long documents, mogg over short passages, chosen by the scope's "
    "level-2 chunks per source",
    scoped=True,
)
def _auto(ctx: RetrievalContext) -> AutoStrategy:
    return AutoStrategy(ctx)
