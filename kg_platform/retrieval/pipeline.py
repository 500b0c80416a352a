"""The one retrieval pipeline: scope -> strategy -> selection -> cut -> enrich.

Every caller that retrieves (the SDK's ``search``, the reasoner behind ``ask``, the LangChain
retriever through the SDK, and the lab's evaluation harness) goes through :func:`retrieve`, so a
question gets the same items whichever door it came in by. ``tests/unit/test_retrieval_pipeline
.py`` fails if another module assembles a strategy and a selection by hand.

The steps:

1. **scope**: :func:`open_context` resolves the user's document names to source ids once;
   strategies pass them to their Cypher (``$sources``), so the restriction happens in the query.
2. **strategy**: a registered strategy (:mod:`kg_platform.retrieval.base`) ranks candidates;
   it is asked for as many as the selection needs (:func:`~.rerank.selection.candidates_needed`).
3. **selection**: ``none``, ``late`` (late-interaction rerank), ``sage`` (rerank + gradient
   cut) or ``auto`` (``late`` where the embedder has word-piece states).
4. **cut**: the first ``k`` of the selected ranking, or the prefix within ``max_tokens`` (the
   crossing item truncated to fit), within what the selection keeps when it decides the count.
5. **enrich**: every returned item gets its source (id, title, uri), section path, page, level
   and chunk id from the graph, whatever the strategy filled in itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kg_platform.retrieval.base import RetrievalContext, RetrievedItem, Strategy, get_strategy
from kg_platform.retrieval.budget import cut_to_budget, items_for_budget
from kg_platform.retrieval.scope import resolve_scope
from kg_platform.retrieval.rerank.selection import (
    candidates_needed,
    rank_and_keep,
    resolve_selection,
)

if TYPE_CHECKING:
    from kg_platform.config import Settings
    from kg_platform.embedding import Embedder
    from kg_platform.graph import GraphClient


@dataclass
class PipelineResult:
    """What one pass of the pipeline produced.

    ``items`` are the cut, enriched items a user gets. ``ranked`` is the whole selected ranking
    before the cut (what a caller that applies its own cut, such as the reasoner's self-feedback
    or the lab's token budgets, works from). ``plans`` are the MoG/MoGG router plans of the run
    when the strategy has them.
    """

    query: str
    strategy: str
    select: str
    items: list[RetrievedItem]
    ranked: list[RetrievedItem] = field(default_factory=list)
    plans: Any = None
    #: the strategy that ran (``auto`` names its choice) and, for ``auto``, why
    ran: str | None = None
    why: str | None = None


def open_context(
    graph: "GraphClient",
    embedder: "Embedder",
    settings: "Settings",
    corpus: str | None,
    scope: Sequence[str] | None = None,
) -> RetrievalContext:
    """Step 1: the context a strategy runs in, with the document scope resolved to source ids."""
    return RetrievalContext(
        graph, embedder, settings, corpus, sources=resolve_scope(graph, scope, corpus)
    )


def retrieve(
    ctx: RetrievalContext,
    query: str,
    *,
    strategy: str | Strategy,
    k: int,
    select: str | None,
    fetch: int = 0,
    max_tokens: int | None = None,
    enrich: bool = True,
) -> PipelineResult:
    """Steps 2-5 for one question in ``ctx``.

    ``strategy`` is a registered name or a strategy already built for ``ctx`` (callers that run
    many questions build it once). ``select`` is resolved here (``auto`` -> ``late`` or
    ``none``). ``fetch`` asks the strategy for at least that many candidates (the lab ranks
    deeper than ``k`` to cut at token budgets). ``max_tokens`` cuts at a token budget instead
    of at ``k``. ``enrich=False`` skips step 5 for callers that only score ids and texts.
    """
    runner = get_strategy(strategy, ctx) if isinstance(strategy, str) else strategy
    chosen = resolve_selection(select, ctx)
    wanted = k if max_tokens is None else items_for_budget(k, max_tokens)
    candidates = runner.retrieve(query, max(fetch, candidates_needed(chosen, wanted, ctx)))
    # the rerank's weights are those of the strategy that ran (``auto`` names its choice)
    ran = getattr(runner, "chosen", None) or runner.name
    ranked, keep = rank_and_keep(chosen, query, list(candidates), ctx, ran)
    if max_tokens is not None:
        items = cut_to_budget(ranked if keep is None else ranked[:keep], max_tokens)
    else:
        items = ranked[: k if keep is None else keep]
    if enrich:
        enrich_items(ctx.graph, items)
    return PipelineResult(
        query=query,
        strategy=strategy if isinstance(strategy, str) else runner.name,
        select=chosen,
        items=items,
        ranked=ranked,
        plans=getattr(runner, "last_plans", None),
        ran=ran,
        why=getattr(runner, "reason", None),
    )


def enrich_items(graph: "GraphClient", items: list[RetrievedItem]) -> None:
    """Step 5: fill source title/uri, section path, page, level and chunk id from the graph.

    What a strategy already set is kept; the rest comes from one query for all items (a piece
    or group inherits its level-1 chunk's section and page).
    """
    if not items:
        return
    rows = {r["id"]: r for r in graph.read("retrieval/item_context", ids=[it.id for it in items])}
    for it in items:
        row = rows.get(it.id)
        if row is None:
            continue
        it.source_id = it.source_id or row["source_id"]
        it.source_title = it.source_title or row["source_title"] or row["source_uri"]
        it.section_title = it.section_title or row["section"]
        it.page = it.page if it.page is not None else row["page"]
        if it.level is None and row["level"] is not None:
            it.level = int(row["level"])
        it.source_uri = it.source_uri or row["source_uri"]
        it.chunk_id = it.chunk_id or row["chunk_id"]
