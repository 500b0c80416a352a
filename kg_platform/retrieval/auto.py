"""``auto``: the strategy chosen by the shape of what is searched.

Measured on held-out questions (QASPER papers scoped to one paper; HotpotQA, 2Wiki and MuSiQue
passage pools), no one strategy leads everywhere: ``propagate`` leads on long documents, whose
section and title layers it scores, and ``mogg`` on pools of short passages, whose neighbouring
sentences its hops gather across passages. What tells the two apart is known before the question
is read: how many level-2 chunks each source in the scope holds. Sources of a few chunks are
passages; sources of dozens are documents. One count per scope (cached) decides, with no
router or weight fitted on anyone's corpus.

The chosen strategy is on each item (``query`` names its Cypher) and in :attr:`AutoStrategy.chosen`.
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
FOR_DOCUMENTS = "propagate"
FOR_PASSAGES = "mogg"


def choose(sources: int, chunks: int) -> str:
    """The strategy for a scope of ``sources`` holding ``chunks`` level-2 chunks."""
    if sources == 0:
        return FOR_DOCUMENTS
    return FOR_DOCUMENTS if chunks / sources >= DOCUMENT_CHUNKS_PER_SOURCE else FOR_PASSAGES


class AutoStrategy:
    """``auto``: ``propagate`` over long documents, ``mogg`` over short passages."""

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
                rows = self.ctx.graph.read("retrieval/scope_shape_corpus", corpus=self.ctx.corpus)
            else:
                rows = self.ctx.graph.read("retrieval/scope_shape_sources", sources=list(sources))
            row = rows[0] if rows else {"sources": 0, "chunks": 0}
            self._shapes[key] = choose(int(row["sources"]), int(row["chunks"]))
            log.debug("auto: %s for %s (%s)", self._shapes[key], key, row)
        return self._shapes[key]

    def retrieve(self, query: str, k: int) -> list[RetrievedItem]:
        chosen = self._choice()
        if chosen not in self._runners:
            self._runners[chosen] = get_strategy(chosen, self.ctx)
        runner = self._runners[chosen]
        items = runner.retrieve(query, k)
        self.chosen = chosen
        self.last_plans = getattr(runner, "last_plans", None)
        return items


@register_strategy(
    "auto",
    "propagate over long documents, mogg over short passages, chosen by the scope's "
    "level-2 chunks per source",
    scoped=True,
)
def _auto(ctx: RetrievalContext) -> AutoStrategy:
    return AutoStrategy(ctx)
