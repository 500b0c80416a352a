"""The LLM-judged steps of reasoning, as one protocol the algorithms call.

Algorithm 1 and 2, the answerer and the SAGE loop never talk to an LLM directly: they call a
:class:`ReasoningSteps`. :class:`kg_platform.reasoning.llm_steps.LLMSteps` implements it over the
platform's LLM client and prompt registry; tests may script it. Indexes returned by selections are
0-based here (prompts number items from 1; the implementation converts).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from kg_platform.reasoning.types import Evidence, TaskClass, Usage


@dataclass
class Proposal:
    """What the proposer returned: sub-questions for the missing knowledge, or 'enough'."""

    sub_questions: list[str] = field(default_factory=list)
    sufficient: bool = False  # the LLM judged the context enough to answer
    thinking: str = ""


@dataclass
class Selection:
    index: int | None  # 0-based, None = nothing useful
    thinking: str = ""


@dataclass
class Draft:
    answer: str
    rationale: str = ""


@dataclass
class Feedback:
    score: int  # 1..10
    adjustment: int  # +1 grow the context, -1 shrink it


class ReasoningSteps(Protocol):
    def propose(self, question: str, context: "list[Evidence]") -> Proposal: ...

    def select(
        self, question: str, context: "list[Evidence]", candidates: list[str]
    ) -> Selection: ...

    def backup_select(
        self, question: str, context: "list[Evidence]", paragraphs: list[str]
    ) -> Selection: ...

    def answer(self, question: str, context: "list[Evidence]") -> Draft: ...

    def feedback(self, question: str, context: "list[Evidence]", answer: str) -> Feedback: ...

    def classify(self, question: str) -> "TaskClass": ...

    def sub_answer(self, question: str, chunk_text: str) -> str: ...

    def usage(self) -> "Usage":
        """Cumulative token/cost totals of the calls made so far."""
        ...
