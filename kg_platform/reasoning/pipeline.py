"""``ask``: question in, cited answer out (the read path's last mile, docs/architecture.md).

Modes:

* ``factual``: retrieve N candidates with a strategy, rerank, SAGE gradient cut (min_k, g),
  answer from the cut with numbered citations; ``feedback`` adds SAGE's self-feedback loop.
  With ``context_tokens`` the LLM reads the default path's chunks within that many tokens
  instead of SAGE's cut (what ``kgp retrieve --budget-tokens`` returns), and self-feedback moves
  by whole chunks inside them; in ``decompose`` the chosen chunks are cut to the budget too.
* ``decompose``: PIKE-RAG Algorithm 1 (knowledge-aware decomposition over atomic questions),
  then the answer from the chosen chunks; the run is stored as a ``(:Trajectory)``.
* ``auto``: the LLM classifies the question (PIKE-RAG paper): factual -> ``factual``;
  linkable-reasoning -> ``decompose``; predictive and creative are answered by the L2
  (``decompose``) pipeline with a note that they are not specialised yet: no
  evaluation data exists for them, so a separate pipeline could not be shown to be better.

Without an LLM every mode returns the best evidence sentences, marked "no LLM configured", and
lists the skipped steps (:mod:`kg_platform.reasoning.fallback`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from kg_platform.errors import ConfigError
from kg_platform.reasoning.answer import citations_for
from kg_platform.reasoning.candidates import GraphCandidates
from kg_platform.reasoning.decompose import Decomposer, DecompositionRun
from kg_platform.reasoning.evidence import enrich, from_items
from kg_platform.reasoning.fallback import evidence_answer
from kg_platform.reasoning.feedback import self_feedback_loop
from kg_platform.reasoning.pool import Ranked, answer_pool, within_budget
from kg_platform.reasoning.steps import Draft, ReasoningSteps
from kg_platform.reasoning.trajectory import store_run
from kg_platform.reasoning.types import Answer, Evidence, TraceEvent

if TYPE_CHECKING:
    from kg_platform.config import Settings
    from kg_platform.retrieval.base import RetrievalContext
    from kg_platform.embedding import Embedder
    from kg_platform.graph import GraphClient
    from kg_platform.llm import LLMClient

log = logging.getLogger(__name__)

Mode = Literal["auto", "factual", "decompose"]
MODES: tuple[str, ...] = ("auto", "factual", "decompose")
UNUSABLE_MARK = "[LLM answer unusable]"
L3_L4_NOTE = (
    "predictive and creative questions are answered by the L2 (decomposition) "
    "pipeline; PIKE-RAG's L3/L4 modules are not specialised yet"
)


@dataclass
class Reasoner:
    """Answers questions over one graph from the parts it is given.

    :meth:`kg_platform.KnowledgePlatform.ask` builds one per question with the configured LLM
    (and closes the LLM afterwards); tests pass scripted steps instead.
    """

    graph: "GraphClient"
    embedder: "Embedder"
    settings: "Settings"
    llm: "LLMClient | None" = None
    steps: ReasoningSteps | None = None
    sources: list[str] | None = None  # document scope (resolved source ids); None = whole corpus
    #: the retrieval context the caller's scope step opened (the SDK's ``ask``): its scope and
    #: the shape read through it are reused, not read again per retrieval
    context: "RetrievalContext | None" = None

    def __post_init__(self) -> None:
        if self.steps is None and self.llm is not None:
            from kg_platform.reasoning.llm_steps import LLMSteps

            cfg = self.settings.tuning.reasoning
            self.steps = LLMSteps(
                self.llm, feedback_bias=cfg.feedback_bias, max_passage_tokens=cfg.max_passage_tokens
            )

    # ------------------------------------------------------------------ public
    def ask(
        self,
        question: str,
        *,
        corpus: str | None = None,
        strategy: str | None = None,
        mode: str = "auto",
        feedback: bool = False,
        context_tokens: int | None = None,
    ) -> Answer:
        """Answer ``question``; ``context_tokens`` overrides ``reasoning.context_tokens`` (the
        LLM reads the default path's chunks within that many tokens instead of SAGE's cut)."""
        question = " ".join(question.split())
        if not question:
            raise ConfigError("the question is empty", hint='kgp ask "your question"')
        if mode not in MODES:
            raise ConfigError(f"unknown mode {mode!r}", hint=f"use one of: {', '.join(MODES)}")
        if context_tokens is not None and context_tokens < 1:
            raise ConfigError(
                f"context_tokens must be at least 1, got {context_tokens}",
                hint="give the LLM at least one token of evidence, e.g. --context-tokens 1280, "
                "or leave it unset for SAGE's cut",
            )
        budget = (
            context_tokens if context_tokens is not None else self.settings.reasoning.context_tokens
        )
        corpus = corpus if corpus is not None else self.settings.corpus
        strategy = strategy or self.settings.reasoning.strategy or self.settings.retrieve.strategy
        if self.steps is None:
            return self._no_llm(question, corpus, strategy, mode, feedback)
        before = self.steps.usage()
        trace: list[TraceEvent] = []
        notes: list[str] = []
        task_class = None
        chosen_mode = mode
        if mode == "auto":
            task_class = self.steps.classify(question)
            chosen_mode = "factual" if task_class == "factual" else "decompose"
            trace.append(TraceEvent("classify", {"task_class": task_class, "mode": chosen_mode}))
            if task_class in ("predictive", "creative"):
                notes.append(L3_L4_NOTE)
        if self.sources and chosen_mode == "decompose":
            chosen_mode = "factual"
            notes.append(
                "answered in factual mode: decomposition does not take a document scope yet"
            )
        run = None
        if chosen_mode == "factual":
            result = self._factual(question, corpus, strategy, feedback, trace, budget)
        else:
            result, run = self._decompose(
                question, corpus, strategy, feedback, trace, notes, budget
            )
        result.task_class = task_class
        result.notes = notes + result.notes
        result.trace = trace
        result.usage = self.steps.usage().minus(before)
        if run is not None and self.settings.tuning.reasoning.store_trajectories:
            result.trajectory_id = self._store(result, run, corpus)
        return result

    # ------------------------------------------------------------------ pipelines
    def _ranked(
        self, question: str, corpus: str | None, strategy: str, budget: int | None
    ) -> Ranked:
        return answer_pool(self._context(corpus), question, strategy, budget)

    def _context(self, corpus: str | None) -> "RetrievalContext":
        """The context retrieval runs in: the caller's when it is over ``corpus`` and this
        scope, else one opened here and kept for the rest of the question."""
        from kg_platform.retrieval.base import RetrievalContext

        ctx = self.context
        if ctx is None or ctx.corpus != corpus or ctx.sources != self.sources:
            ctx = RetrievalContext(
                self.graph, self.embedder, self.settings, corpus, sources=self.sources
            )
            self.context = ctx
        return ctx

    def _factual(
        self,
        question: str,
        corpus: str | None,
        strategy: str,
        feedback: bool,
        trace: list[TraceEvent],
        budget: int | None,
    ) -> Answer:
        assert self.steps is not None
        ranked = self._ranked(question, corpus, strategy, budget)
        selected = ranked.cut(ranked.min_k)
        cut = (
            {"context_tokens": ranked.budget_tokens}
            if ranked.budget_tokens is not None
            else {"min_k": ranked.min_k, "g": ranked.gradient}
        )
        trace.append(
            TraceEvent(
                "retrieve",
                {
                    "strategy": strategy,
                    "candidates": len(ranked.items),
                    "reranker": ranked.scorer,
                    **cut,
                    "selected": len(selected),
                    "scores": [round(s, 4) for s in ranked.scores],
                },
            )
        )
        draft = self.steps.answer(question, selected)
        answer = self._answer(question, "factual", selected, draft, trace)
        if feedback and ranked.items:
            self._feedback(
                answer, question, ranked.items, ranked.min_k, ranked.cut, (selected, draft), trace
            )
        return answer

    def _decompose(
        self,
        question: str,
        corpus: str | None,
        strategy: str,
        feedback: bool,
        trace: list[TraceEvent],
        notes: list[str],
        budget: int | None,
    ) -> tuple[Answer, DecompositionRun]:
        assert self.steps is not None
        dcfg = self.settings.tuning.decomposition
        source = GraphCandidates(
            self.graph, self.embedder, corpus, chunk_index=f"chunk_embedding_l{dcfg.chunk_level}"
        )
        decomposer = Decomposer(
            self.steps,
            source,
            max_rounds=dcfg.max_rounds,
            delta=dcfg.delta,
            k=dcfg.top_k_atoms,
            fallbacks=dcfg.fallbacks,
            backup=dcfg.backup_select,
            max_proposals=dcfg.max_proposals,
            enrich=lambda ev: enrich(self.graph, ev),
        )
        run = decomposer.run(question)
        trace.append(
            TraceEvent(
                "decompose",
                {
                    "rounds": len(run.rounds),
                    "stop": run.stop_reason,
                    "chosen": [c.to_dict() for c in run.chosen],
                },
            )
        )
        context = within_budget(run.context, budget)
        ranked: Ranked | None = None
        if not context:
            # Nothing was chosen (e.g. the atomic layer is empty): answer from direct retrieval
            # rather than from the model's memory, and say so.
            ranked = self._ranked(question, corpus, strategy, budget)
            context = ranked.cut(ranked.min_k)
            notes.append(
                f"decomposition chose no chunk ({run.stop_reason}); answered from "
                f"direct retrieval ({strategy})"
            )
            trace.append(TraceEvent("retrieve", {"strategy": strategy, "selected": len(context)}))
        draft = self.steps.answer(question, context)
        answer = self._answer(question, "decompose", context, draft, trace)
        if feedback:
            if ranked is None:
                ranked = self._ranked(question, corpus, strategy, budget)
            chosen_ids = {e.chunk_id for e in context}
            # under a token budget the whole pool is cut to it, so widening stays inside it
            pool = within_budget(
                list(context) + [e for e in ranked.items if e.chunk_id not in chosen_ids], budget
            )
            self._feedback(
                answer, question, pool, len(context), lambda m: pool[:m], (context, draft), trace
            )
        return answer, run

    def _answer(
        self,
        question: str,
        mode: str,
        context: list[Evidence],
        draft: Draft,
        trace: list[TraceEvent],
    ) -> Answer:
        trace.append(
            TraceEvent(
                "answer",
                {
                    "passages": len(context),
                    "usable": bool(draft.answer),
                    "rationale": draft.rationale[:500],
                },
            )
        )
        if not draft.answer:
            draft = self._unusable(question, context)
        return Answer(
            question=question,
            answer=draft.answer,
            rationale=draft.rationale,
            citations=citations_for(context, draft.answer, draft.rationale),
            mode=mode,
        )

    def _unusable(self, question: str, context: list[Evidence]) -> Draft:
        """The LLM gave no usable answer: show the best evidence sentences, marked, instead."""
        from kg_platform.reasoning.fallback import best_sentences

        picked = best_sentences(
            question, context, self.embedder, self.settings.tuning.reasoning.evidence_sentences
        )
        quotes = " ".join(f'"{s}" [{i + 1}]' for _, i, s in picked)
        return Draft(
            answer=f"{UNUSABLE_MARK} the best evidence sentences are: {quotes}"
            if quotes
            else f"{UNUSABLE_MARK} no evidence was found.",
            rationale="",
        )

    def _feedback(
        self,
        answer: Answer,
        question: str,
        pool: list[Evidence],
        min_k: int,
        select: Callable[[int], list[Evidence]],
        first: tuple[list[Evidence], Draft],
        trace: list[TraceEvent],
    ) -> None:
        assert self.steps is not None
        steps = self.steps
        cfg = self.settings.tuning.reasoning
        outcome = self_feedback_loop(
            pool,
            min_k,
            select,
            lambda ctx: steps.answer(question, ctx),
            lambda ctx, text: steps.feedback(question, ctx, text),
            threshold=cfg.feedback_threshold,
            rounds=cfg.feedback_rounds,
            first=first,
        )
        trace.append(
            TraceEvent(
                "self_feedback",
                {
                    "stop": outcome.stop,
                    "accepted": outcome.accepted,
                    "rounds": [r.to_dict() for r in outcome.rounds],
                },
            )
        )
        draft = outcome.draft if outcome.draft.answer else self._unusable(question, outcome.context)
        answer.answer = draft.answer
        answer.rationale = draft.rationale
        answer.citations = citations_for(outcome.context, draft.answer, draft.rationale)
        answer.feedback_rounds = len(outcome.rounds)
        answer.feedback_score = outcome.score

    def _store(self, answer: Answer, run: DecompositionRun, corpus: str | None) -> str:
        return store_run(
            self.graph,
            kind="ask",
            question=answer.question,
            corpus=corpus,
            run=run,
            answer=answer.answer,
            usage=answer.usage,
            model=getattr(self.llm, "model", "") or "",
        )

    # ------------------------------------------------------------------ no LLM
    def _no_llm(
        self, question: str, corpus: str | None, strategy: str, mode: str, feedback: bool
    ) -> Answer:
        from kg_platform.retrieval.pipeline import retrieve

        k = self.settings.tuning.reasoning.evidence_chunks
        # the default selection (the late rerank): the chunks `kgp retrieve` would return
        result = retrieve(
            self._context(corpus),
            question,
            strategy=strategy,
            k=k,
            select=self.settings.retrieve.select,
            enrich=False,
        )
        context = enrich(self.graph, from_items(result.items, via=strategy))
        skipped = []
        if mode == "auto":
            skipped.append("task classification")
        if mode in ("auto", "decompose"):
            skipped.append("knowledge-aware decomposition")
        skipped.append("answer generation")
        if feedback:
            skipped.append("self-feedback")
        return evidence_answer(
            question,
            context,
            self.embedder,
            skipped=skipped,
            strategy=strategy,
            top=self.settings.tuning.reasoning.evidence_sentences,
        )
