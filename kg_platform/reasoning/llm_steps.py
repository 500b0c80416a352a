""":class:`ReasoningSteps` over the platform's LLM client and its prompt registry.

Prompts (``kg_platform.llm.prompts``): ``propose``, ``select``, ``backup_select``, ``answer``,
``self_feedback``, ``classify_task``, plus ``sub_answer`` for Algorithm 3's intermediate answers.
Prompts number items from 1; this module converts to 0-based indexes and treats an out-of-range
or invalid selection as "none" (the decomposer then runs the backup selection).

An invalid structured reply (after the client's one repair retry) never crashes a question: a
proposer failure becomes "no usable proposals", a selector failure "no selection", a feedback
failure "accept" (the loop cannot steer without a score), and the answerer falls back to the raw
reply text. Each such failure is counted on the client's usage meter.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from kg_platform.errors import LLMOutputInvalid
from kg_platform.reasoning.steps import Draft, Feedback, Proposal, Selection
from kg_platform.reasoning.types import Evidence, TaskClass, Usage

if TYPE_CHECKING:
    from kg_platform.llm import LLMClient

log = logging.getLogger(__name__)

#: longest passage (tokens) shown to the LLM; a local model's context is small
PASSAGE_TOKENS = 400


def passage(ev: Evidence, max_tokens: int = PASSAGE_TOKENS) -> str:
    from kg_platform.tokens import truncate_tokens

    title = ev.source_title or ""
    if ev.section and ev.section != title:
        title = f"{title} > {ev.section}" if title else ev.section
    body = truncate_tokens(ev.text.strip(), max_tokens)
    return f"Title: {title}. Content: {body}" if title else body


def format_context(
    context: list[Evidence], *, numbered: bool = True, max_tokens: int = PASSAGE_TOKENS
) -> str:
    """Passages as the prompts show them; ``[n]`` numbers are the answer's citation numbers."""
    if not context:
        return "(none yet)"
    if numbered:
        return "\n".join(f"[{i}] {passage(ev, max_tokens)}" for i, ev in enumerate(context, 1))
    return "\n".join(passage(ev, max_tokens) for ev in context)


def numbered(items: list[str], label: str) -> str:
    return "\n".join(f"{label} {i}: {' '.join(t.split())}" for i, t in enumerate(items, 1))


def _index(value: int | None, n: int) -> int | None:
    if value is None or isinstance(value, bool):
        return None
    return value - 1 if 1 <= value <= n else None


_CLASS_MAP: dict[str, TaskClass] = {
    "factual": "factual",
    "linkable_reasoning": "linkable-reasoning",
    "predictive": "predictive",
    "creative": "creative",
}


class LLMSteps:
    """The reasoning steps, each one prompt of the registry."""

    def __init__(
        self,
        llm: "LLMClient",
        *,
        feedback_bias: bool = False,
        max_passage_tokens: int = PASSAGE_TOKENS,
    ) -> None:
        self.llm = llm
        self.feedback_bias = feedback_bias
        self.max_passage_tokens = max_passage_tokens

    def _ctx(self, context: list[Evidence]) -> str:
        return format_context(context, max_tokens=self.max_passage_tokens)

    def propose(self, question: str, context: list[Evidence]) -> Proposal:
        try:
            out = self.llm.structured(
                "propose", {"question": question, "context": self._ctx(context)}
            )
        except LLMOutputInvalid as exc:
            log.warning("proposer output invalid: %s", exc)
            return Proposal([], sufficient=False, thinking=f"proposer output invalid: {exc}")
        subs = list(out.sub_questions)  # type: ignore[attr-defined]
        # The reference code reads an empty list as "no need to decompose further".
        return Proposal(subs, sufficient=not subs, thinking=out.thinking)  # type: ignore[attr-defined]

    def select(self, question: str, context: list[Evidence], candidates: list[str]) -> Selection:
        try:
            out = self.llm.structured(
                "select",
                {
                    "question": question,
                    "context": self._ctx(context),
                    "candidates": numbered(candidates, "Question"),
                },
            )
        except LLMOutputInvalid as exc:
            return Selection(None, f"selection output invalid: {exc}")
        return Selection(_index(out.question_idx, len(candidates)), out.thinking)  # type: ignore[attr-defined]

    def backup_select(
        self, question: str, context: list[Evidence], paragraphs: list[str]
    ) -> Selection:
        from kg_platform.tokens import truncate_tokens

        shown = [truncate_tokens(p, self.max_passage_tokens // 2) for p in paragraphs]
        try:
            out = self.llm.structured(
                "backup_select",
                {
                    "question": question,
                    "context": self._ctx(context),
                    "candidates": numbered(shown, "Paragraph"),
                },
            )
        except LLMOutputInvalid as exc:
            return Selection(None, f"backup selection output invalid: {exc}")
        return Selection(_index(out.paragraph_idx, len(paragraphs)), out.thinking)  # type: ignore[attr-defined]

    def answer_variables(self, question: str, context: list[Evidence]) -> dict[str, str]:
        return {"question": question, "context": self._ctx(context)}

    def answer(self, question: str, context: list[Evidence]) -> Draft:
        try:
            out = self.llm.structured("answer", self.answer_variables(question, context))
        except LLMOutputInvalid as exc:
            log.warning("answer output invalid: %s", exc)
            # No reply text in the rationale: it may echo "[n]" passages and fake citations.
            return Draft(answer="", rationale="")
        return Draft(answer=str(out.answer).strip(), rationale=out.rationale)  # type: ignore[attr-defined]

    def feedback(self, question: str, context: list[Evidence], answer: str) -> Feedback:
        from kg_platform.llm import get_prompt

        original = get_prompt("answer").render(self.answer_variables(question, context))[-1]
        bias = (
            " When unsure, prefer shrinking (-1) about 60% of the time and growing (1) about 40%."
            if self.feedback_bias
            else ""
        )
        try:
            out = self.llm.structured(
                "self_feedback",
                {"original_prompt": original["content"], "answer": answer, "bias": bias},
            )
        except LLMOutputInvalid as exc:
            log.warning("self-feedback output invalid, accepting the answer: %s", exc)
            return Feedback(score=10, adjustment=1)
        return Feedback(score=int(out.score), adjustment=int(out.adjustment))  # type: ignore[attr-defined]

    def classify(self, question: str) -> TaskClass:
        try:
            out = self.llm.structured("classify_task", {"question": question})
        except LLMOutputInvalid:
            return "linkable-reasoning"  # the general pipeline handles every class
        return _CLASS_MAP.get(out.task_class, "linkable-reasoning")  # type: ignore[attr-defined]

    def sub_answer(self, question: str, chunk_text: str) -> str:
        ev = Evidence(chunk_id="", text=chunk_text)
        return self.answer(question, [ev]).answer

    def usage(self) -> Usage:
        u = self.llm.usage
        return Usage(
            calls=u.calls,
            cached_calls=u.cache_hits,
            prompt_tokens=u.prompt_tokens,
            completion_tokens=u.completion_tokens,
            cost_usd=u.cost_usd,
        )
