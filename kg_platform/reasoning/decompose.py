"""PIKE-RAG Algorithm 1: task solving with knowledge-aware decomposition (PIKE-RAG paper).

::

    C_0 = {}
    for t = 1..N:
        P   = LLM_propose(q, C_{t-1})                  # stop: context sufficient / no proposals
        A   = atomic candidates of P with cos >= delta  # stop: none (after both fallbacks)
        q_t = LLM_select(q, C_{t-1}, A)                 # backup: select a paragraph; stop: none
        C_t = C_{t-1} + chunk(q_t)
    answer = LLM_answer(q, C_t)                         # done by the caller (answer.py)

Every round is recorded (proposals, candidates with scores and paths, the choice, tokens) so the
run can be stored as a ``(:Trajectory)`` and inspected. Chunks, not intermediate answers, stay in
the context, as in the paper.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kg_platform.reasoning.candidates import ContextCandidate, CandidateSource, find_candidates
from kg_platform.reasoning.steps import Proposal, ReasoningSteps
from kg_platform.reasoning.types import Evidence

#: Why a decomposition loop ended.
STOP_SUFFICIENT = "context_sufficient"  # the proposer judged the context enough
STOP_NO_PROPOSALS = "no_proposals"  # the proposer returned no usable sub-question
STOP_NO_CANDIDATES = "no_candidates"  # no atomic question (or chunk) reached delta
STOP_NO_SELECTION = "no_selection"  # neither selection nor backup selection chose one
STOP_MAX_ROUNDS = "max_rounds"  # N rounds done
STOP_REASONS = (
    STOP_SUFFICIENT,
    STOP_NO_PROPOSALS,
    STOP_NO_CANDIDATES,
    STOP_NO_SELECTION,
    STOP_MAX_ROUNDS,
)

Enrich = Callable[[list[Evidence]], list[Evidence]]


@dataclass
class Round:
    t: int
    proposals: list[str] = field(default_factory=list)
    sufficient: bool = False
    thinking: str = ""
    candidates: list[ContextCandidate] = field(default_factory=list)
    selected: ContextCandidate | None = None
    selected_by: str | None = None  # 'select' | 'backup_select'
    sampled_chunk: str | None = None  # Algorithm 2: the UCB context sample c_s
    near_misses: dict[str, float] = field(default_factory=dict)  # Algorithm 2: S credit
    stop: str | None = None
    tokens: int = 0

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "t": self.t,
            "proposals": self.proposals,
            "sufficient": self.sufficient,
            "thinking": self.thinking[:500],
            "candidates": [c.to_dict() for c in self.candidates],
            "selected": self.selected.to_dict() if self.selected else None,
            "selected_by": self.selected_by,
            "stop": self.stop,
            "tokens": self.tokens,
        }
        if self.sampled_chunk is not None:
            out["sampled_chunk"] = self.sampled_chunk
        if self.near_misses:
            out["near_misses"] = {k: round(v, 4) for k, v in self.near_misses.items()}
        return out


@dataclass
class DecompositionRun:
    question: str
    context: list[Evidence]  # chosen chunks, in the order they were chosen
    chosen: list[ContextCandidate]
    rounds: list[Round]
    stop_reason: str

    def steps_json(self) -> list[dict[str, Any]]:
        return [r.to_dict() for r in self.rounds]


def clean_proposals(raw: list[str], limit: int) -> list[str]:
    """Non-empty, de-duplicated (case-insensitively) proposals, at most ``limit``.

    Small local models repeat themselves; a repeated proposal only costs index look-ups.
    """
    seen: set[str] = set()
    out: list[str] = []
    for item in raw:
        text = " ".join(str(item).split())
        key = text.lower().rstrip("?")
        if not any(ch.isalnum() for ch in key) or key in seen:
            continue
        seen.add(key)
        out.append(text)
        if len(out) >= limit:
            break
    return out


def choose_next(
    steps: ReasoningSteps,
    question: str,
    context: list[Evidence],
    candidates: list[ContextCandidate],
    *,
    backup: bool,
) -> tuple[ContextCandidate | None, str | None, str]:
    """LLM selection over the candidates' atomic questions; on failure the backup prompt picks a
    paragraph (one per distinct chunk) instead, as the reference code does."""
    selection = steps.select(question, context, [c.label for c in candidates])
    if selection.index is not None and 0 <= selection.index < len(candidates):
        return candidates[selection.index], "select", selection.thinking
    if not backup:
        return None, None, selection.thinking
    by_chunk: dict[str, ContextCandidate] = {}
    for cand in candidates:  # candidates are sorted by cos: first is best
        by_chunk.setdefault(cand.chunk_id, cand)
    paragraphs = list(by_chunk.values())
    second = steps.backup_select(question, context, [p.chunk_text for p in paragraphs])
    thinking = "\n".join(x for x in (selection.thinking, second.thinking) if x)
    if second.index is not None and 0 <= second.index < len(paragraphs):
        return paragraphs[second.index], "backup_select", thinking
    return None, None, thinking


def evidence_of(cand: ContextCandidate) -> Evidence:
    return Evidence(
        chunk_id=cand.chunk_id,
        text=cand.chunk_text,
        score=cand.cos,
        via=cand.atom or f"chunk retrieved for: {cand.proposal}",
    )


class Decomposer:
    """Runs Algorithm 1 for one question; see the module docstring."""

    def __init__(
        self,
        steps: ReasoningSteps,
        source: CandidateSource,
        *,
        max_rounds: int = 5,
        delta: float = 0.5,
        k: int = 4,
        fallbacks: bool = True,
        backup: bool = True,
        max_proposals: int = 8,
        enrich: Enrich | None = None,
    ) -> None:
        self.steps = steps
        self.source = source
        self.max_rounds = max_rounds
        self.delta = delta
        self.k = k
        self.fallbacks = fallbacks
        self.backup = backup
        self.max_proposals = max_proposals
        self.enrich = enrich or (lambda ev: ev)

    def run(self, question: str) -> DecompositionRun:
        context: list[Evidence] = []
        chosen: list[ContextCandidate] = []
        rounds: list[Round] = []
        stop = STOP_MAX_ROUNDS
        for t in range(1, self.max_rounds + 1):
            before = self.steps.usage().total_tokens
            rnd = Round(t=t)
            rounds.append(rnd)
            stop_now = self._round(question, context, chosen, rnd)
            rnd.tokens = self.steps.usage().total_tokens - before
            if stop_now:
                stop = rnd.stop or stop
                break
        return DecompositionRun(question, context, chosen, rounds, stop)

    def _round(
        self, question: str, context: list[Evidence], chosen: list[ContextCandidate], rnd: Round
    ) -> bool:
        proposal: Proposal = self.steps.propose(question, context)
        rnd.thinking = proposal.thinking
        rnd.sufficient = proposal.sufficient
        if proposal.sufficient:
            rnd.stop = STOP_SUFFICIENT
            return True
        rnd.proposals = clean_proposals(proposal.sub_questions, self.max_proposals)
        if not rnd.proposals:
            rnd.stop = STOP_NO_PROPOSALS
            return True
        in_context = {e.chunk_id for e in context}
        rnd.candidates = find_candidates(
            self.source,
            rnd.proposals,
            question,
            in_context,
            k=self.k,
            delta=self.delta,
            fallbacks=self.fallbacks,
        )
        if not rnd.candidates:
            rnd.stop = STOP_NO_CANDIDATES
            return True
        picked, how, thinking = choose_next(
            self.steps, question, context, rnd.candidates, backup=self.backup
        )
        if thinking:
            rnd.thinking = (rnd.thinking + "\n" + thinking).strip()
        if picked is None:
            rnd.stop = STOP_NO_SELECTION
            return True
        rnd.selected, rnd.selected_by = picked, how
        chosen.append(picked)
        context.extend(self.enrich([evidence_of(picked)]))
        return False
