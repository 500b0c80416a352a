"""PIKE-RAG Algorithm 2 (decomposer training data by UCB context sampling) and the Algorithm 3 SFT
export (PIKE-RAG paper).

Algorithm 2, per question::

    C_0 = {}; S = chunk -> 0; V = chunk -> 1
    for t = 1..N:
        c_s = argmax_c S(c) + alpha * sqrt(ln t / V(c))     # skipped while S is empty / all zero
        P   = LLM_propose(q, C_{t-1} + [c_s])               # the sample is shown to the proposer only
        AC  = atomic questions in the top-K' of some proposal with cos >= delta'
        RAP = those with max cos >= delta; the others credit S(chunk) += max cos  (near misses)
        q_t = LLM_select(q, C_{t-1}, RAP)                    # None -> stop
        C_t = C_{t-1} + chunk(q_t); S(chunk) = 0; V(chunk) += 1
    answer = LLM_answer(q, C_t); score = F1(answer, gold)

Choices where the paper is silent (the lab's ``decomposer`` settings): alpha = ``ucb_alpha`` (1.0);
V(c_s) is incremented after sampling too, so one near miss cannot win every round; K' =
``top_k_explore`` = 2K = 8; delta' = ``delta_explore`` = delta - 0.15. A question is re-run (S and V
kept, so exploration moves on) until a run's answer is correct (F1 >= ``correct_f1``) or
``attempts`` runs are spent. Every run is stored as a
``(:Trajectory {kind: 'collect'})``.

Algorithm 3: a correct trajectory (q, [(q_1, a_1) .. (q_t, a_t)], a) yields t + 1 SFT examples:
x_i = prompt_x(q, pairs before i) -> ``<decompose>True</decompose><sub-question>q_i</sub-question>``
and x_{t+1} = prompt_x(q, all pairs) -> ``<decompose>False</decompose>``; a_i is the LLM's answer
to q_i from its chunk (our choice: Algorithm 1 does not produce it). prompt_x is the registry's
``decompose`` prompt, so training and inference share one template.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg_platform_lab.qa_file import read_qa_rows
from kg_platform.errors import EvaluationError
from kg_platform.reasoning.candidates import ContextCandidate, CandidateSource
from kg_platform.reasoning.decompose import (
    STOP_MAX_ROUNDS,
    STOP_NO_CANDIDATES,
    STOP_NO_PROPOSALS,
    STOP_NO_SELECTION,
    STOP_SUFFICIENT,
    Enrich,
    Round,
    choose_next,
    clean_proposals,
    evidence_of,
)
from kg_platform_lab.decomposer.scoring import exact_match, token_f1
from kg_platform.reasoning.steps import ReasoningSteps
from kg_platform.reasoning.types import Evidence

if TYPE_CHECKING:
    from kg_platform.graph import GraphClient


# ---------------------------------------------------------------------- UCB
@dataclass
class UCBState:
    """S (exploration credit) and V (visit counts) of one question's chunks."""

    alpha: float = 1.0
    S: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    V: dict[str, int] = field(default_factory=lambda: defaultdict(lambda: 1))

    def sample(self, t: int, exclude: set[str]) -> str | None:
        """argmax_c S(c) + alpha * sqrt(ln t / V(c)) over chunks with credit, not in context."""
        pool = [c for c, s in self.S.items() if s > 0 and c not in exclude]
        if not pool:
            return None
        bonus = math.log(t) if t > 1 else 0.0

        def ucb(c: str) -> float:
            return self.S[c] + self.alpha * math.sqrt(bonus / self.V[c])

        best = max(pool, key=lambda c: (ucb(c), c))
        self.V[best] += 1  # our choice: count the sample, not only the choice
        return best

    def credit(self, chunk_id: str, cos: float) -> None:
        self.S[chunk_id] += cos

    def chose(self, chunk_id: str) -> None:
        self.S[chunk_id] = 0.0
        self.V[chunk_id] += 1


@dataclass
class CollectedRun:
    question: str
    context: list[Evidence]
    chosen: list[ContextCandidate]
    rounds: list[Round]
    stop_reason: str
    answer: str = ""
    f1: float = 0.0
    em: float = 0.0
    tokens: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0

    def steps_json(self) -> list[dict[str, Any]]:
        return [r.to_dict() for r in self.rounds]


def collect_one(
    steps: ReasoningSteps,
    source: CandidateSource,
    question: str,
    state: UCBState,
    *,
    max_rounds: int,
    delta: float,
    delta_explore: float,
    k_explore: int,
    max_proposals: int = 8,
    backup: bool = True,
    enrich: Enrich | None = None,
) -> CollectedRun:
    """One Algorithm 2 run (without the answer; see :func:`collect_question`)."""
    enrich = enrich or (lambda ev: ev)
    context: list[Evidence] = []
    chosen: list[ContextCandidate] = []
    rounds: list[Round] = []
    known: dict[str, ContextCandidate] = {}  # chunk id -> a candidate carrying its text
    stop = STOP_MAX_ROUNDS
    for t in range(1, max_rounds + 1):
        before = steps.usage().total_tokens
        rnd = Round(t=t)
        rounds.append(rnd)
        in_context = {e.chunk_id for e in context}
        sampled = state.sample(t, in_context)
        shown = list(context)
        if sampled is not None and sampled in known:
            rnd.sampled_chunk = sampled
            shown += enrich([evidence_of(known[sampled])])
        proposal = steps.propose(question, shown)
        rnd.thinking, rnd.sufficient = proposal.thinking, proposal.sufficient
        if proposal.sufficient:
            rnd.stop = stop = STOP_SUFFICIENT
        else:
            rnd.proposals = clean_proposals(proposal.sub_questions, max_proposals)
            if not rnd.proposals:
                rnd.stop = stop = STOP_NO_PROPOSALS
        if rnd.stop is None:
            found = source.via_atoms(rnd.proposals, in_context, k=k_explore, delta=delta_explore)
            rap: list[ContextCandidate] = []
            for cand in found:
                known.setdefault(cand.chunk_id, cand)
                if cand.cos >= delta:
                    rap.append(cand)
                else:
                    state.credit(cand.chunk_id, cand.cos)
                    rnd.near_misses[cand.chunk_id] = (
                        rnd.near_misses.get(cand.chunk_id, 0.0) + cand.cos
                    )
            rnd.candidates = rap
            if not rap:
                rnd.stop = stop = STOP_NO_CANDIDATES
            else:
                picked, how, thinking = choose_next(steps, question, context, rap, backup=backup)
                if thinking:
                    rnd.thinking = (rnd.thinking + "\n" + thinking).strip()
                if picked is None:
                    rnd.stop = stop = STOP_NO_SELECTION
                else:
                    rnd.selected, rnd.selected_by = picked, how
                    chosen.append(picked)
                    context.extend(enrich([evidence_of(picked)]))
                    state.chose(picked.chunk_id)
        rnd.tokens = steps.usage().total_tokens - before
        if rnd.stop is not None:
            break
    return CollectedRun(question, context, chosen, rounds, stop)


# ---------------------------------------------------------------------- SFT (Algorithm 3)
def decompose_prompt(question: str, pairs: list[tuple[str, str]]) -> list[dict[str, str]]:
    """prompt_x(q, pairs) rendered with the registry's ``decompose`` prompt."""
    from kg_platform.llm.prompts import get_prompt

    shown = "\n".join(f"{i}. Q: {q}\n   A: {a}" for i, (q, a) in enumerate(pairs, 1)) or "(none)"
    return get_prompt("decompose").render({"question": question, "pairs": shown})


def sft_examples(question: str, pairs: list[tuple[str, str]], **meta: Any) -> list[dict[str, Any]]:
    """The t + 1 supervised examples of one correct trajectory (PIKE-RAG paper)."""
    out = []
    for i in range(len(pairs) + 1):
        messages = decompose_prompt(question, pairs[:i])
        if i < len(pairs):
            target = f"<decompose>True</decompose><sub-question>{pairs[i][0]}</sub-question>"
        else:
            target = "<decompose>False</decompose>"
        out.append(
            {
                "prompt": messages[-1]["content"],
                "completion": target,
                "messages": [*messages, {"role": "assistant", "content": target}],
                "step": i + 1,
                **meta,
            }
        )
    return out


# ---------------------------------------------------------------------- datasets
@dataclass
class QAItem:
    id: str
    question: str
    answers: list[str]


def read_questions(path: str | Path, limit: int | None = None) -> list[QAItem]:
    """Questions and gold answers (answer + answer_aliases) of a ``bench/dev`` JSONL file."""
    items = [
        QAItem(
            str(row.get("id", lineno)),
            row["question"],
            [str(row["answer"]), *[str(a) for a in row.get("answer_aliases") or []]],
        )
        for lineno, row in read_qa_rows(
            path,
            required=("question", "answer"),
            limit=limit,
            hint="Algorithm 2 scores runs against the gold answer: every line needs "
            "'question' and 'answer'",
        )
    ]
    if not items:
        raise EvaluationError(f"{path} holds no questions", hint="is it the right file?")
    return items


# ---------------------------------------------------------------------- the collector
@dataclass
class CollectReport:
    questions: int = 0
    solved: int = 0
    runs: int = 0
    examples: int = 0
    tokens: int = 0
    stops: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def summary(self) -> str:
        rate = self.solved / self.questions if self.questions else 0.0
        stops = ", ".join(f"{k} {v}" for k, v in sorted(self.stops.items()))
        return (
            f"{self.questions} questions, {self.solved} solved ({rate:.0%}) in {self.runs} "
            f"runs; {self.examples} SFT examples; {self.tokens} LLM tokens; stops: {stops}"
        )


@dataclass
class Collector:
    steps: ReasoningSteps
    source: CandidateSource
    max_rounds: int = 5
    delta: float = 0.5
    delta_explore: float = 0.35
    k_explore: int = 8
    alpha: float = 1.0
    attempts: int = 3
    correct_f1: float = 0.8
    max_proposals: int = 8
    backup: bool = True
    enrich: Enrich | None = None
    store: Callable[[QAItem, CollectedRun, int], None] | None = None
    last_runs: list[CollectedRun] = field(default_factory=list)

    def question(self, item: QAItem) -> tuple[list[CollectedRun], CollectedRun | None]:
        """Runs of one question until one is correct; returns (all runs, the correct one)."""
        state = UCBState(alpha=self.alpha)
        runs: list[CollectedRun] = []
        for attempt in range(1, self.attempts + 1):
            before = self.steps.usage()
            run = collect_one(
                self.steps,
                self.source,
                item.question,
                state,
                max_rounds=self.max_rounds,
                delta=self.delta,
                delta_explore=self.delta_explore,
                k_explore=self.k_explore,
                max_proposals=self.max_proposals,
                backup=self.backup,
                enrich=self.enrich,
            )
            run.answer = self.steps.answer(item.question, run.context).answer
            run.f1 = token_f1(run.answer, item.answers)
            run.em = exact_match(run.answer, item.answers)
            used = self.steps.usage().minus(before)
            run.tokens, run.prompt_tokens = used.total_tokens, used.prompt_tokens
            run.completion_tokens, run.cost_usd = used.completion_tokens, used.cost_usd
            runs.append(run)
            if self.store is not None:
                self.store(item, run, attempt)
            if run.f1 >= self.correct_f1:
                return runs, run
        return runs, None

    def examples_of(self, item: QAItem, run: CollectedRun) -> list[dict[str, Any]]:
        pairs = []
        for cand in run.chosen:
            sub_q = cand.atom or cand.proposal or ""
            pairs.append((sub_q, self.steps.sub_answer(sub_q, cand.chunk_text)))
        return sft_examples(
            item.question, pairs, question_id=item.id, answer=run.answer, f1=round(run.f1, 4)
        )

    def collect(self, items: list[QAItem]) -> Iterator[tuple[QAItem, list[dict[str, Any]]]]:
        """Yield (question, SFT examples) per question; empty when no run was correct."""
        for item in items:
            runs, good = self.question(item)
            self.last_runs = runs
            yield item, (self.examples_of(item, good) if good is not None else [])


def collect_to_jsonl(
    collector: Collector,
    items: list[QAItem],
    out: str | Path,
    progress: Callable[[str], None] | None = None,
) -> CollectReport:
    """Run the collector over ``items`` and write the SFT examples to ``out`` (JSONL)."""
    report = CollectReport()
    before = collector.steps.usage().total_tokens
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as fh:
        for item, examples in collector.collect(items):
            report.questions += 1
            runs = collector.last_runs
            report.runs += len(runs)
            for run in runs:
                report.stops[run.stop_reason] += 1
            if examples:
                report.solved += 1
            for ex in examples:
                fh.write(json.dumps(ex, ensure_ascii=False) + "\n")
            report.examples += len(examples)
            if progress:
                best = max((r.f1 for r in runs), default=0.0)
                progress(
                    f"{item.id}: {len(runs)} run(s), best F1 {best:.2f}, {len(examples)} examples"
                )
    report.tokens = collector.steps.usage().total_tokens - before
    return report


def graph_store(
    graph: "GraphClient", corpus: str | None, model: str = ""
) -> Callable[[QAItem, CollectedRun, int], None]:
    """A ``Collector.store`` that writes each run as a ``(:Trajectory {kind: 'collect'})``."""
    from kg_platform.reasoning.trajectory import store_run
    from kg_platform.reasoning.types import Usage

    def store(item: QAItem, run: CollectedRun, attempt: int) -> None:
        store_run(
            graph,
            kind="collect",
            question=item.question,
            corpus=corpus,
            run=run,
            answer=run.answer,
            usage=Usage(
                prompt_tokens=run.prompt_tokens,
                completion_tokens=run.completion_tokens,
                cost_usd=run.cost_usd,
            ),
            model=model,
            score=run.f1,
            extra={"question_id": item.id, "attempt": attempt, "em": run.em, "gold": item.answers},
        )

    return store
