"""The shapes an LLM's reply must take, one pydantic model per prompt, plus the two parsers.

Split out of :mod:`kg_platform.llm.prompts` so the registry of prompt texts and the validation of
what comes back can each be read on their own. A model here is a *reply*, not a platform result:
``AnswerReply`` is what the ``answer`` prompt returns (the platform's own answer is
:class:`kg_platform.Answer`), ``FeedbackReply`` what the ``self_feedback`` prompt returns (the
feedback loop's value is :class:`kg_platform.reasoning.steps.Feedback`). Prompts whose paper
format is not JSON (the two-line self-feedback of the SAGE paper, the PIKE-RAG decomposer's tags)
have a parser here that turns the text into a dict first.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator


def _clean_list(values: list[Any], *, limit: int | None = None) -> list[str]:
    """Strip, drop empties and case-insensitive duplicates (small models repeat themselves)."""
    seen: set[str] = set()
    out: list[str] = []
    for v in values or []:
        if not isinstance(v, str):
            v = str(v)
        s = re.sub(r"^\s*(?:[-*\u2022]|\d+[.)])\s*", "", v).strip()
        key = s.lower()
        if s and key not in seen:
            seen.add(key)
            out.append(s)
        if limit and len(out) >= limit:
            break
    return out


# ------------------------------------------------------------------ output schemas
class AtomicQuestions(BaseModel):
    questions: list[str] = Field(default_factory=list)

    @field_validator("questions", mode="before")
    @classmethod
    def _clean(cls, v: Any) -> list[str]:
        return _clean_list(v if isinstance(v, list) else [v])


class ExtractedEntity(BaseModel):
    name: str
    type: str = "thing"
    description: str = ""

    @field_validator("name", "type", mode="before")
    @classmethod
    def _strip(cls, v: Any) -> str:
        return str(v or "").strip()


class ExtractedRelation(BaseModel):
    source: str
    target: str
    type: str = "related_to"
    evidence: str = ""

    @field_validator("source", "target", "type", mode="before")
    @classmethod
    def _strip(cls, v: Any) -> str:
        return str(v or "").strip()


class EntityGraph(BaseModel):
    entities: list[ExtractedEntity] = Field(default_factory=list)
    relations: list[ExtractedRelation] = Field(default_factory=list)


class TagClass(BaseModel):
    name: str
    description: str = ""


class TagClasses(BaseModel):
    classes: list[TagClass] = Field(default_factory=list)


class ChunkTags(BaseModel):
    """{class name: [tags]} (PIKE-RAG paper)."""

    tags: dict[str, list[str]] = Field(default_factory=dict)

    @field_validator("tags", mode="before")
    @classmethod
    def _clean(cls, v: Any) -> dict[str, list[str]]:
        if not isinstance(v, dict):
            return {}
        return {
            str(k).strip(): _clean_list(x if isinstance(x, list) else [x])
            for k, x in v.items()
            if str(k).strip()
        }


class TagMapping(BaseModel):
    query_tag: str
    corpus_tag: str
    confidence: float = 1.0


class TagMappings(BaseModel):
    mappings: list[TagMapping] = Field(default_factory=list)


class Summary(BaseModel):
    summary: str


class Resplit(BaseModel):
    reasoning: str = ""
    end_line: int
    summary_first: str = ""
    summary_second: str = ""


class Proposals(BaseModel):
    thinking: str = ""
    sub_questions: list[str] = Field(default_factory=list)

    @field_validator("sub_questions", mode="before")
    @classmethod
    def _clean(cls, v: Any) -> list[str]:
        return _clean_list(v if isinstance(v, list) else [v])


class QuestionSelection(BaseModel):
    thinking: str = ""
    question_idx: int | None = None


class ParagraphSelection(BaseModel):
    thinking: str = ""
    paragraph_idx: int | None = None


class AnswerReply(BaseModel):
    rationale: str = ""
    answer: str


class FeedbackReply(BaseModel):
    score: int = Field(ge=1, le=10)
    adjustment: Literal[-1, 1]


class TaskClass(BaseModel):
    task_class: Literal["factual", "linkable_reasoning", "predictive", "creative"]
    rationale: str = ""

    @field_validator("task_class", mode="before")
    @classmethod
    def _norm(cls, v: Any) -> str:
        s = str(v or "").strip().lower().replace("-", "_").replace(" ", "_")
        return {
            "linkable": "linkable_reasoning",
            "linkable_reasoning_question": "linkable_reasoning",
        }.get(s, s)


class DecomposeDecision(BaseModel):
    decompose: bool
    sub_question: str | None = None


# ------------------------------------------------------------------ non-JSON parsers
def parse_feedback(text: str) -> dict[str, Any]:
    """SAGE paper: ``Evaluation Score: <1-10>`` / ``Context Adjustment: <1 or -1>``."""
    score = re.search(r"score\s*[:=]\s*\**\s*(10|[1-9])", text, re.IGNORECASE)
    adj = re.search(r"adjustment\s*[:=]\s*\**\s*([+-]?1)\b", text, re.IGNORECASE)
    if not score or not adj:
        raise ValueError(
            "expected the two lines 'Evaluation Score: <1-10>' and 'Context Adjustment: <1 or -1>'"
        )
    return {"score": int(score.group(1)), "adjustment": int(adj.group(1))}


def parse_decompose(text: str) -> dict[str, Any]:
    """The PIKE-RAG decomposer: ``<decompose>False</decompose>`` or ``<decompose>True</decompose><sub-question>..``."""
    flag = re.search(r"<decompose>\s*(true|false)\s*</decompose>", text, re.IGNORECASE)
    if not flag:
        raise ValueError("expected <decompose>True|False</decompose>")
    if flag.group(1).lower() == "false":
        return {"decompose": False, "sub_question": None}
    sub = re.search(r"<sub-question>(.*?)</sub-question>", text, re.IGNORECASE | re.DOTALL)
    if not sub or not sub.group(1).strip():
        raise ValueError("<decompose>True</decompose> needs a <sub-question>...</sub-question>")
    return {"decompose": True, "sub_question": sub.group(1).strip()}
