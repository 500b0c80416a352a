"""Every prompt of the platform, in one place, versioned, each with its output schema.

A :class:`Prompt` has a name, a version (part of every cache key, so editing a prompt means
bumping its version and re-running only what it touches), a system and a user template
(``string.Template``: ``$name`` placeholders, so JSON braces in the text need no escaping), the
pydantic model its reply must validate against (:mod:`kg_platform.llm.replies`), and sampling
defaults. Prompts whose paper format is not JSON (SAGE's two-line feedback, the Algorithm 3
decomposer tags) carry a ``parser`` that turns the reply into a dict first. Every prompt here has
a user in the package or the lab (``tests/unit/test_names.py`` checks it).

Sources of intent: the PIKE-RAG paper (forward summaries, auto-tagging, atomizing, decomposition:
propose/select/backup-select/answer, the decomposer's prompt_x, task classes,
knowledge-graph distillation) and the SAGE paper (self-feedback).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from string import Template
from typing import Any

from pydantic import BaseModel

from kg_platform.errors import LLMError
from kg_platform.llm.replies import (
    AnswerReply,
    AtomicQuestions,
    ChunkTags,
    DecomposeDecision,
    EntityGraph,
    ExtractedEntity,
    ExtractedRelation,
    FeedbackReply,
    ParagraphSelection,
    Proposals,
    QuestionSelection,
    Resplit,
    Summary,
    TagClass,
    TagClasses,
    TagMapping,
    TagMappings,
    TaskClass,
    parse_decompose,
    parse_feedback,
)

# The reply models and parsers live in kg_platform.llm.replies; they stay importable from here.
__all__ = [
    "PROMPTS",
    "AnswerReply",
    "AtomicQuestions",
    "ChunkTags",
    "DecomposeDecision",
    "EntityGraph",
    "ExtractedEntity",
    "ExtractedRelation",
    "FeedbackReply",
    "ParagraphSelection",
    "Prompt",
    "Proposals",
    "QuestionSelection",
    "Resplit",
    "Summary",
    "TagClass",
    "TagClasses",
    "TagMapping",
    "TagMappings",
    "TaskClass",
    "get_prompt",
    "parse_decompose",
    "parse_feedback",
    "register_prompt",
]


# ------------------------------------------------------------------ registry
@dataclass(frozen=True)
class Prompt:
    name: str
    version: str
    system: str
    user: str
    schema: type[BaseModel]
    temperature: float | None = None  # None = settings.llm.temperature
    max_tokens: int | None = None  # None = settings.llm.max_tokens
    parser: Callable[[str], Any] | None = None  # None = JSON extraction
    list_field: str | None = None  # a bare JSON list is wrapped into this field

    def render(self, variables: dict[str, Any]) -> list[dict[str, str]]:
        try:
            user = Template(self.user).substitute({k: _as_text(v) for k, v in variables.items()})
        except KeyError as exc:
            raise LLMError(
                f"prompt {self.name!r} needs the variable {exc.args[0]!r}",
                hint="pass every $placeholder of the prompt in `variables`",
            ) from exc
        msgs = [{"role": "system", "content": self.system}] if self.system else []
        msgs.append({"role": "user", "content": user})
        return msgs

    @property
    def key(self) -> str:
        return f"{self.name}@{self.version}"


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return "\n".join(str(v) for v in value)
    return str(value)


PROMPTS: dict[str, Prompt] = {}


def register_prompt(prompt: Prompt) -> Prompt:
    PROMPTS[prompt.name] = prompt
    return prompt


def get_prompt(name: str) -> Prompt:
    if name not in PROMPTS:
        raise LLMError(
            f"no prompt named {name!r}", hint=f"known prompts: {', '.join(sorted(PROMPTS))}"
        )
    return PROMPTS[name]


_JSON_ONLY = "Reply with one JSON object and nothing else."

# PIKE-RAG: knowledge atomizing
register_prompt(
    Prompt(
        name="atomize",
        version="1",
        system="You write the questions a passage answers. " + _JSON_ONLY,
        user=(
            "Title: $title\n"
            "Content:\n$text\n\n"
            "List up to $max_questions diverse, non-duplicate questions that the content above "
            "answers. Each question must name its entities explicitly (no pronouns such as he, she, "
            "it, they) and be answerable from the content alone.\n"
            'Reply as JSON: {"questions": ["...", "..."]}'
        ),
        schema=AtomicQuestions,
        temperature=0.7,
        max_tokens=384,
        list_field="questions",
    )
)

# PIKE-RAG: knowledge-graph distillation
register_prompt(
    Prompt(
        name="entities",
        version="1",
        system="You extract a knowledge graph from text. " + _JSON_ONLY,
        user=(
            "Title: $title\nText:\n$text\n\n"
            "Extract up to $max_entities named entities (people, organisations, places, works, "
            "products, events, concepts) with a short type, and the relations between them that the "
            "text states. Use each entity's full name as written in the text. Relation types are "
            "short verb phrases in snake_case. Evidence is the shortest quote that states the "
            "relation.\n"
            'Reply as JSON: {"entities": [{"name": "...", "type": "...", "description": "..."}], '
            '"relations": [{"source": "...", "target": "...", "type": "...", "evidence": "..."}]}'
        ),
        schema=EntityGraph,
        temperature=0.0,
        max_tokens=768,
    )
)

# PIKE-RAG: auto-tagging, step 1: tag classes from sample chunks
register_prompt(
    Prompt(
        name="tag_classes",
        version="1",
        system="You design tag taxonomies for document collections. " + _JSON_ONLY,
        user=(
            "Sample passages from one document collection:\n$samples\n\n"
            "Identify the key factors a reader would search this collection by, and generalise them "
            "into at most $max_classes tag classes (short category names, e.g. person, drug, "
            "regulation, date).\n"
            'Reply as JSON: {"classes": [{"name": "...", "description": "..."}]}'
        ),
        schema=TagClasses,
        temperature=0.0,
        max_tokens=384,
        list_field="classes",
    )
)

# PIKE-RAG: step 2: tags of one chunk
register_prompt(
    Prompt(
        name="tag_extract",
        version="1",
        system="You tag passages with terms from a fixed set of classes. " + _JSON_ONLY,
        user=(
            "Tag classes:\n$classes\n\nText:\n$text\n\n"
            "For each class, list the terms from the text that belong to it (exact wording, at most "
            "5 per class; omit classes with none).\n"
            'Reply as JSON: {"tags": {"<class>": ["...", "..."]}}'
        ),
        schema=ChunkTags,
        temperature=0.0,
        max_tokens=256,
    )
)

# PIKE-RAG: step 3/4: map colloquial query tags onto corpus tags
register_prompt(
    Prompt(
        name="tag_map",
        version="1",
        system="You map a user's words onto a collection's terminology. " + _JSON_ONLY,
        user=(
            "Query tags:\n$query_tags\n\nCorpus tags (class: tag):\n$corpus_tags\n\n"
            "For each query tag, give the corpus tags that mean the same thing or what the user "
            "most likely means, with a confidence between 0 and 1. Only use corpus tags listed "
            "above.\n"
            'Reply as JSON: {"mappings": [{"query_tag": "...", "corpus_tag": "...", '
            '"confidence": 0.9}]}'
        ),
        schema=TagMappings,
        temperature=0.0,
        max_tokens=384,
        list_field="mappings",
    )
)

# PIKE-RAG: step 4: tags of a query (same classes as the corpus)
register_prompt(
    Prompt(
        name="query_tags",
        version="1",
        system="You extract search terms from questions. " + _JSON_ONLY,
        user=(
            "Tag classes:\n$classes\n\nQuestion: $question\n\n"
            "For each class, list the terms of the question that belong to it.\n"
            'Reply as JSON: {"tags": {"<class>": ["..."]}}'
        ),
        schema=ChunkTags,
        temperature=0.0,
        max_tokens=192,
    )
)

# PIKE-RAG: forward-summary chunking
register_prompt(
    Prompt(
        name="fwd_summary",
        version="1",
        system="You summarise documents faithfully. " + _JSON_ONLY,
        user=(
            "Summarise the following text in at most 3 sentences, keeping names, numbers and "
            "dates.\nText:\n$text\n\n"
            'Reply as JSON: {"summary": "..."}'
        ),
        schema=Summary,
        temperature=0.0,
        max_tokens=256,
    )
)
register_prompt(
    Prompt(
        name="fwd_summary_refine",
        version="1",
        system="You summarise documents faithfully. " + _JSON_ONLY,
        user=(
            "Summary of the document so far:\n$previous\n\nNext part:\n$text\n\n"
            "Summarise the next part in at most 3 sentences, using the earlier summary to resolve "
            "references.\n"
            'Reply as JSON: {"summary": "..."}'
        ),
        schema=Summary,
        temperature=0.0,
        max_tokens=256,
    )
)
register_prompt(
    Prompt(
        name="fwd_resplit",
        version="1",
        system="You split documents into coherent chunks. " + _JSON_ONLY,
        user=(
            "Summary of the document so far:\n$previous\n\n"
            "Numbered lines of the next window:\n$lines\n\n"
            "Choose the last line (end_line, a line number above) of a structurally sensible first "
            "chunk so that no text is lost, then summarise the first chunk and, using that summary "
            "as context, the rest of the window.\n"
            'Reply as JSON: {"reasoning": "...", "end_line": 3, "summary_first": "...", '
            '"summary_second": "..."}'
        ),
        schema=Resplit,
        temperature=0.0,
        max_tokens=512,
    )
)

# PIKE-RAG: Algorithm 1
register_prompt(
    Prompt(
        name="propose",
        version="1",
        system="You decompose questions into atomic sub-questions. " + _JSON_ONLY,
        user=(
            "Question: $question\n\nKnown context:\n$context\n\n"
            "Analyse what is still missing to answer the question from the known context, and raise "
            "diverse atomic sub-questions that would retrieve it (name entities explicitly). If the "
            "context already suffices, return an empty list.\n"
            'Reply as JSON: {"thinking": "...", "sub_questions": ["..."]}'
        ),
        schema=Proposals,
        temperature=0.0,
        max_tokens=384,
        list_field="sub_questions",
    )
)
register_prompt(
    Prompt(
        name="select",
        version="1",
        system="You choose the next piece of knowledge to look up. " + _JSON_ONLY,
        user=(
            "Question: $question\n\nKnown context:\n$context\n\nCandidate questions:\n$candidates\n\n"
            "Choose the one candidate whose answer is most useful for the question and is not "
            "already answerable from the context or general knowledge. If none helps, use null.\n"
            'Reply as JSON: {"thinking": "...", "question_idx": 1}'
        ),
        schema=QuestionSelection,
        temperature=0.0,
        max_tokens=256,
    )
)
register_prompt(
    Prompt(
        name="backup_select",
        version="1",
        system="You choose the next passage to read. " + _JSON_ONLY,
        user=(
            "Question: $question\n\nKnown context:\n$context\n\nCandidate paragraphs:\n$candidates\n\n"
            "Choose the one paragraph most useful for answering the question that adds something "
            "the context lacks. If none helps, use null.\n"
            'Reply as JSON: {"thinking": "...", "paragraph_idx": 1}'
        ),
        schema=ParagraphSelection,
        temperature=0.0,
        max_tokens=256,
    )
)
register_prompt(
    Prompt(
        name="answer",
        version="1",
        system="You answer questions from the given context only. " + _JSON_ONLY,
        user=(
            "Context:\n$context\n\nQuestion: $question\n\n"
            "Answer from the context. Cite passages by their [number] in the rationale. Keep the "
            "answer short (a name, number, date or short phrase) when the question allows it.\n"
            'Reply as JSON: {"rationale": "...", "answer": "..."}'
        ),
        schema=AnswerReply,
        temperature=0.0,
        max_tokens=384,
    )
)

# SAGE paper self-feedback (paper format: two lines)
register_prompt(
    Prompt(
        name="self_feedback",
        version="1",
        system="You grade answers strictly.",
        user=(
            "$original_prompt\n\nAnswer given:\n$answer\n\n"
            "Rate the answer from 1 to 10 for accuracy and reasonableness given the context "
            "(9 or more = highly accurate), and say whether the context should grow (1) or shrink "
            "(-1) to improve it.$bias\n"
            "Reply with exactly two lines:\nEvaluation Score: <1-10>\nContext Adjustment: <1 or -1>"
        ),
        schema=FeedbackReply,
        temperature=0.0,
        max_tokens=32,
        parser=parse_feedback,
    )
)

# PIKE-RAG paper task classes
register_prompt(
    Prompt(
        name="classify_task",
        version="1",
        system="You classify questions by the reasoning they need. " + _JSON_ONLY,
        user=(
            "Classes:\n"
            "- factual: the answer is stated in the documents and fits in one passage.\n"
            "- linkable_reasoning: needs facts from several passages or steps (bridging, "
            "comparison, counting/statistics, summarising).\n"
            "- predictive: the answer is not in the text; it must be inferred or forecast from "
            "organised facts.\n"
            "- creative: asks for new plans, ideas or improvements based on domain logic.\n\n"
            "Question: $question\n\n"
            'Reply as JSON: {"task_class": "factual", "rationale": "..."}'
        ),
        schema=TaskClass,
        temperature=0.0,
        max_tokens=128,
    )
)

# PIKE-RAG paper decomposer prompt_x (Algorithm 3 SFT format)
register_prompt(
    Prompt(
        name="decompose",
        version="1",
        system="",
        user=(
            "Original question: $question\n\nSub-questions answered so far:\n$pairs\n\n"
            "Is another follow-up question needed to answer the original question? Reply exactly "
            "<decompose>False</decompose> or "
            "<decompose>True</decompose><sub-question>...</sub-question>"
        ),
        schema=DecomposeDecision,
        temperature=0.0,
        max_tokens=96,
        parser=parse_decompose,
    )
)
