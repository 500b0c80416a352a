"""Typed results of the read path's last mile: evidence, citations, usage, trace and the answer.

They are plain dataclasses so the CLI can print them, ``--json`` can dump them, and the SDK can
return them unchanged. ``Answer.render()`` is what a person sees.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

TaskClass = Literal["factual", "linkable-reasoning", "predictive", "creative"]
TASK_CLASSES: tuple[TaskClass, ...] = ("factual", "linkable-reasoning", "predictive", "creative")

NO_LLM_MARK = "[no LLM configured]"


@dataclass
class Evidence:
    """One chunk placed in the answer's context, with what is needed to cite it."""

    chunk_id: str
    text: str
    score: float = 0.0
    source_id: str | None = None
    source_title: str | None = None
    source_uri: str | None = None
    section: str | None = None
    page: int | None = None
    level: int | None = None
    via: str = ""  # how it was found: strategy name, or the atomic question


@dataclass
class Citation:
    """A numbered reference ``[n]`` in the answer, pointing at one chunk."""

    n: int
    chunk_id: str
    source_title: str | None
    source_uri: str | None
    section: str | None
    page: int | None
    cited: bool = False  # the answer text refers to ``[n]``
    quote: str = ""  # the evidence sentence (no-LLM answers) or chunk opening

    def label(self) -> str:
        parts = [self.source_title or self.source_uri or "?"]
        if self.section:
            parts.append(f"§ {self.section}")
        if self.page is not None:
            parts.append(f"p. {self.page}")
        return ", ".join(parts) + f" (chunk {self.chunk_id})"


@dataclass
class Usage:
    """Token and cost totals of one question (or one collection run)."""

    calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, other: "Usage") -> "Usage":
        return Usage(
            self.calls + other.calls,
            self.cached_calls + other.cached_calls,
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cost_usd + other.cost_usd,
        )

    def minus(self, other: "Usage") -> "Usage":
        return Usage(
            self.calls - other.calls,
            self.cached_calls - other.cached_calls,
            self.prompt_tokens - other.prompt_tokens,
            self.completion_tokens - other.completion_tokens,
            self.cost_usd - other.cost_usd,
        )


@dataclass
class TraceEvent:
    """One thing the pipeline did, in order (``step`` names the stage)."""

    step: str
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass
class Answer:
    """What ``kgp ask`` / ``ask()`` return."""

    question: str
    answer: str
    citations: list[Citation]
    mode: str  # 'factual' | 'decompose' | 'no-llm'
    task_class: str | None = None  # from classification when mode was auto
    llm: bool = True  # False: no LLM configured, answer is evidence
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    rationale: str = ""
    trace: list[TraceEvent] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    trajectory_id: str | None = None
    feedback_rounds: int = 0
    feedback_score: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["usage"]["total_tokens"] = self.usage.total_tokens
        return out

    def render(self) -> str:
        """Human-readable answer with numbered sources, notes and token totals."""
        lines = [f"A: {self.answer}"]
        if self.citations:
            lines.append("")
            lines.append("Sources:")
            for c in self.citations:
                mark = "*" if c.cited else " "
                lines.append(f" {mark}[{c.n}] {c.label()}")
                if c.quote and not self.llm:
                    lines.append(f'       "{c.quote}"')
        for note in self.notes:
            lines.append(f"note: {note}")
        if self.skipped:
            lines.append("skipped: " + ", ".join(self.skipped))
        u = self.usage
        lines.append(
            f"mode: {self.mode}"
            + (f" (class: {self.task_class})" if self.task_class else "")
            + f"; LLM calls {u.calls} ({u.cached_calls} cached), tokens {u.prompt_tokens} in + "
            f"{u.completion_tokens} out, cost ${u.cost_usd:.4f}"
            + (f"; feedback rounds {self.feedback_rounds}" if self.feedback_rounds else "")
        )
        return "\n".join(lines)
