"""The pool of evidence an answer is drafted from, and the cut over it.

Split out of :mod:`kg_platform.reasoning.pipeline` so the question of *which chunks the LLM
reads* (a reranked pool cut by the gradient rule of the SAGE paper, or the default path's chunks
within a token budget) sits apart from the modes that use it (factual, decomposition, the
feedback loop widening or narrowing the cut).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from kg_platform.reasoning.evidence import enrich, from_items
from kg_platform.reasoning.types import Evidence

if TYPE_CHECKING:
    from kg_platform.retrieval.base import RetrievalContext


@dataclass
class Ranked:
    """The reranked candidates of one question and the cut over them: SAGE's gradient cut
    (keep ``min_k``, then while the scores fall gently). Under a token budget (``budget_tokens``)
    the items are already the chunks within it, and a cut is their first ``min_k``, so nothing
    (self-feedback included) reads past the budget."""

    items: list[Evidence]
    scores: list[float]
    scorer: str
    min_k: int
    gradient: float | None = None
    budget_tokens: int | None = None

    def cut(self, min_k: int) -> list[Evidence]:
        from kg_platform.retrieval.rerank.selection import gradient_cut

        if not self.items:
            return []
        if self.budget_tokens is not None:
            return self.items[:min_k]
        assert self.gradient is not None, "SAGE's cut needs its gradient"
        return self.items[: gradient_cut(self.scores, min_k, self.gradient)]


def within_budget(evidence: list[Evidence], budget: int | None) -> list[Evidence]:
    """``evidence`` in its order, cut to ``budget`` tokens (the last one truncated to fit, by
    the same rule as retrieval's budget cut); all of it when there is no budget."""
    if budget is None:
        return evidence
    from kg_platform.retrieval.budget import prefix_within

    kept = prefix_within([ev.text for ev in evidence], budget)
    return [replace(ev, text=text) for ev, text in zip(evidence, kept)]


def answer_pool(
    ctx: "RetrievalContext", question: str, strategy: str, budget: int | None
) -> Ranked:
    """The pool for one question: ``sage.n_candidates`` candidates reranked through the
    retrieval pipeline's ``sage`` selection, kept whole (not cut) with their scores, so the
    factual answer takes the gradient cut and the feedback loop can widen it. With a token
    budget, the default path's ranking instead (:func:`budgeted_pool`)."""
    from kg_platform.retrieval.pipeline import retrieve
    from kg_platform.retrieval.rerank.selection import sage_gradient, sage_scorer

    if budget is not None:
        return budgeted_pool(ctx, question, strategy, budget)
    cfg = ctx.settings.tuning.sage
    result = retrieve(ctx, question, strategy=strategy, k=cfg.n_candidates, select="sage")
    evidence = from_items(result.ranked, via=strategy)
    scorer = sage_scorer(ctx)
    return Ranked(
        enrich(ctx.graph, evidence),
        [float(it.score) for it in result.ranked],
        scorer,
        cfg.min_k,
        sage_gradient(ctx.settings, scorer),
    )


def budgeted_pool(ctx: "RetrievalContext", question: str, strategy: str, tokens: int) -> Ranked:
    """The default path's chunks within ``tokens`` (``retrieve.select``: what ``kgp retrieve
    --budget-tokens`` returns, in its order, the last one truncated to fit). Why a budget
    beside the gradient cut: a model with a small context window, or a fixed cost per question,
    needs a bound on what it reads that a gradient cut does not give."""
    from kg_platform.retrieval.pipeline import retrieve

    result = retrieve(
        ctx,
        question,
        strategy=strategy,
        k=ctx.settings.retrieve.k,
        select=ctx.settings.retrieve.select,
        max_tokens=tokens,
        enrich=False,
    )
    return Ranked(
        enrich(ctx.graph, from_items(result.items, via=strategy)),
        [float(it.score) for it in result.items],
        result.select,
        min_k=len(result.items),
        budget_tokens=tokens,
    )
