"""``auto``: the strategy chosen by the shape of what is searched, and for passages by the question.

No one strategy leads everywhere. On pools of short passages (multi-hop questions) ``mogg``
leads the plain baselines, because its hops gather neighbouring sentences across passages; where
the corpus has the distilled layer's entities and the question names one of them, ``entity``'s
walk over shared entities reaches the second hop, and leads ``mogg`` on the multi-hop dev sets.
A question that names none of them (only common noun phrases match) goes to ``mogg``. Inside
long documents ``propagate`` answers: its scores from the section and source titles find the
right paper across a corpus of papers (every measure ahead of ``hybrid`` there); inside one
paper its level-1 chunks reach more evidence paragraphs for the same tokens (``hybrid`` over
level-1 chunks does as well) with about the same share of gold sentences, and they are shorter
for the rerank to read. ``hybrid`` answers when the chosen strategy finds nothing. The lab's
record has the measurements (``lab/results/2026-11-27/default-path/``,
``2026-11-28/question-keys/``, ``2026-11-29/documents-propagate/``, ``documents-units/``).

What tells the kinds apart is known before the question is read: how many level-2 chunks each
source holds (sources of a few chunks are passages; sources of dozens are documents;
:mod:`kg_platform.graph.corpus_shape`, which ingestion reads too, to build the entities where
this walks them), and whether the corpus has entities. One count over a sample of sources (the
scope step's :meth:`~kg_platform.retrieval.base.RetrievalContext.shape`) and one existence
check decide (kept per retrieval context), so the cost does not grow with the
corpus; for passages with entities, the read of the question's seeds the walk needs anyway
decides between ``entity`` and ``mogg``. Nothing is fitted on anyone's corpus.
"""

from __future__ import annotations

import logging

from kg_platform.graph.corpus_shape import holds_documents
from kg_platform.retrieval.base import (
    RetrievalContext,
    RetrievedItem,
    Strategy,
    get_strategy,
    register_strategy,
)

log = logging.getLogger(__name__)

FOR_DOCUMENTS = "propagate"
FOR_PASSAGES = "mogg"
#: passages of a corpus with the distilled layer's entities (``entity`` has no document scope)
FOR_PASSAGES_WITH_ENTITIES = "entity"
#: answers when the chosen strategy finds nothing (a corpus without the piece graph mogg walks):
#: the simplest, which needs only the chunks and their indexes
FALLBACK = "hybrid"


def choose(sources: int, chunks: int, entities: bool = False) -> str:
    """The strategy for a scope of ``sources`` holding ``chunks`` level-2 chunks; ``entities``:
    the scope is a whole corpus with the distilled layer's entities, and spaCy is installed."""
    if holds_documents(sources, chunks):
        return FOR_DOCUMENTS
    return FOR_PASSAGES_WITH_ENTITIES if entities else FOR_PASSAGES


class AutoStrategy:
    """``auto``: ``propagate`` over long documents, ``mogg`` over short passages (``entity``
    where the corpus has the distilled layer and the question names one of its entities);
    ``hybrid`` answers when that finds nothing (a graph without the piece graph ``mogg``
    walks). The strategy that ran is in :attr:`chosen`, why in :attr:`reason` (and each item's
    ``query`` names its Cypher)."""

    name = "auto"

    def __init__(self, ctx: RetrievalContext) -> None:
        self.ctx = ctx
        self._shapes: dict[tuple[str | None, tuple[str, ...] | None], str] = {}
        self._runners: dict[str, Strategy] = {}
        self.chosen: str | None = None
        #: why :attr:`chosen` ran, in words (``--explain`` prints it)
        self.reason: str | None = None
        self.last_plans: object = None

    def _choice(self) -> str:
        key = self.ctx.scope_key()
        if key not in self._shapes:
            shape = self.ctx.shape()  # read by the scope step, once per context
            n_sources, n_chunks = shape.sources, shape.chunks
            entities = key[1] is None and self._has_entity_layer()
            self._shapes[key] = choose(n_sources, n_chunks, entities)
            log.debug(
                "auto: %s for %s (%d sources, %d chunks)",
                self._shapes[key],
                key,
                n_sources,
                n_chunks,
            )
        return self._shapes[key]

    def _has_entity_layer(self) -> bool:
        """Whether ``entity`` can walk here: the corpus has entities, and the question's can be
        found (by the corpus's entity keys; with ``question_finder = spacy``, only where spaCy
        is installed; without them the walk starts from the question's chunks alone)."""
        from kg_platform.distilling.nlp import nlp_available

        settings = self.ctx.settings
        if self.ctx.corpus is None:
            return False
        if settings.tuning.entity_graph.question_finder == "spacy" and not nlp_available(
            settings.distill.nlp_model
        ):
            return False
        rows = self.ctx.graph.read("distill/corpus_has_entities", corpus=self.ctx.corpus)
        return bool(rows and rows[0]["has_entities"])

    def retrieve(self, query: str, k: int) -> list[RetrievedItem]:
        chosen = self._choice()
        if chosen == FOR_PASSAGES_WITH_ENTITIES:
            chosen, items, reason = self._walk_or_hops(query, k)
        else:
            items = self._run(chosen, query, k)
            reason = (
                "the scope holds long documents"
                if chosen == FOR_DOCUMENTS
                else "the scope holds short passages"
            )
        if not items and chosen != FALLBACK:
            # e.g. a graph built without pieces, where mogg has nothing to hop over
            log.info("auto: %s found nothing; %s answers", chosen, FALLBACK)
            reason = f"{chosen} found nothing"
            chosen = FALLBACK
            items = self._run(chosen, query, k)
        self.chosen, self.reason = chosen, reason
        return items

    def _walk_or_hops(self, query: str, k: int) -> tuple[str, list[RetrievedItem], str]:
        """``entity`` when the question names an entity of the corpus, else ``mogg``: the walk
        draws its reach from the named entities it starts at, and from common noun phrases
        alone ("the river", "the film") it spreads over every paragraph that uses them. One
        read of the question's seeds decides, and the walk reuses them. Returns the strategy
        that ran, its items and why it ran."""
        from kg_platform.retrieval.strategies.entity import EntityStrategy

        walker = self._runner(FOR_PASSAGES_WITH_ENTITIES)
        assert isinstance(walker, EntityStrategy)
        qv, seeds = walker.seeds(query)
        named = [seed["name"] for seed in seeds if seed["named"]]
        if not named:
            reason = "the question names no entity of the corpus"
            return FOR_PASSAGES, self._run(FOR_PASSAGES, query, k), reason
        self.last_plans = None
        reason = "the question names " + ", ".join(named[:3]) + (", ..." if len(named) > 3 else "")
        return FOR_PASSAGES_WITH_ENTITIES, walker.run(qv, seeds, k), reason

    def _runner(self, name: str) -> Strategy:
        if name not in self._runners:
            self._runners[name] = get_strategy(name, self.ctx)
        return self._runners[name]

    def _run(self, name: str, query: str, k: int) -> list[RetrievedItem]:
        runner = self._runner(name)
        items = list(runner.retrieve(query, k))
        self.last_plans = getattr(runner, "last_plans", None)
        return items


@register_strategy(
    "auto",
    "propagate over long documents, mogg over short passages (entity where the corpus has "
    "the distilled layer and the question names one of its entities), chosen by the scope's "
    "level-2 chunks per source",
    scoped=True,
    every_corpus=True,
)
def _auto(ctx: RetrievalContext) -> AutoStrategy:
    return AutoStrategy(ctx)
