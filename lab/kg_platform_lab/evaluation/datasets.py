"""QA dataset files in the ``bench/dev`` schema, with gold facts resolved to text.

A row has ``question``, ``answer``, ``paragraphs`` (``idx``, ``title``, ``sentences``,
``is_supporting``, ``doc_id``) and ``supporting_facts`` as ``[title, sentence_index]``. Scoring
works on text, not on ids, so every strategy (chunks, pieces, hop groups) is judged the same way:
each gold fact becomes a :class:`~kg_platform_lab.evaluation.metrics.GoldFact` whose ``units`` are the
normalised texts that count as "this fact was returned".

Resolution rules (why: titles are not unique in MuSiQue):

* a fact ``[title, i]`` resolves to a *supporting* paragraph with that title; the n-th repeat of
  the same ``[title, i]`` in a row resolves to the n-th supporting paragraph with that title;
  without a supporting paragraph of that title, the first paragraph with that title is used;
* sentence-level datasets (HotpotQA, 2Wiki): the fact's one unit is the sentence text;
* paragraph-level datasets (MuSiQue, PubMedQA: the "sentence" is a whole paragraph or section):
  the text is split into sentences with :func:`split_sentences` (the ingestion's own splitter,
  :mod:`kg_platform.segmenting.sentences`, so units are the sentences pieces are made of; a
  fragment shorter than 25 characters joins its successor) and the fact counts as covered when
  any one of them is returned (MuSiQue gives whole paragraphs as support, so no single
  sentence of them is the fact). Unknown datasets are treated as
  paragraph-level when every paragraph of the row holds exactly one "sentence".
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kg_platform_lab.qa_file import read_qa_rows
from kg_platform.errors import EvaluationError
from kg_platform_lab.evaluation.metrics import GoldFact, normalise

SENTENCE_LEVEL = frozenset({"hotpotqa", "2wikimultihopqa"})
PARAGRAPH_LEVEL = frozenset({"musique", "pubmedqa"})
# A split-off unit shorter than this joins its neighbour: "Yes." alone would match anywhere.
MIN_UNIT_CHARS = 25

# Fallback splitter, used only if the ingestion's splitter is absent: split after . ! ? when the
# next word starts like a sentence.
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'\u201d)\]]*\s+(?=[\"'\u201c(\[]?[A-Z0-9])")


def _raw_sentences(text: str) -> list[str]:
    """Sentences by the same splitter ingestion uses for pieces (so units match piece texts)."""
    try:
        from kg_platform.segmenting.sentences import split_sentences as ingestion_split
    except ImportError:  # pragma: no cover - the segmenter ships with the package
        return _SENTENCE_END.split(text)
    return ingestion_split(text)


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` (normalised), fragments under MIN_UNIT_CHARS merged into the next."""
    parts = [normalise(p) for p in _raw_sentences(text)]
    parts = [p for p in parts if p]
    merged: list[str] = []
    carry = ""
    for part in parts:
        part = f"{carry} {part}".strip() if carry else part
        if len(part) < MIN_UNIT_CHARS:
            carry = part
            continue
        merged.append(part)
        carry = ""
    if carry:
        if merged:
            merged[-1] = f"{merged[-1]} {carry}"
        else:
            merged.append(carry)
    return merged


@dataclass
class QAExample:
    """One question with its resolved gold facts."""

    id: str
    question: str
    answer: str
    dataset: str
    gold: list[GoldFact]
    paragraphs: list[dict[str, Any]] = field(repr=False, default_factory=list)
    type: str | None = None


def _paragraph_level(dataset: str, paragraphs: list[dict[str, Any]]) -> bool:
    if dataset in SENTENCE_LEVEL:
        return False
    if dataset in PARAGRAPH_LEVEL:
        return True
    return bool(paragraphs) and all(len(p.get("sentences") or []) == 1 for p in paragraphs)


def resolve_gold(row: dict[str, Any]) -> list[GoldFact]:
    """The gold facts of one row (see the module docstring for the rules)."""
    paragraphs: list[dict[str, Any]] = row.get("paragraphs") or []
    dataset = str(row.get("dataset") or "")
    para_level = _paragraph_level(dataset, paragraphs)
    supporting: dict[str, list[dict[str, Any]]] = defaultdict(list)
    any_by_title: dict[str, dict[str, Any]] = {}
    for p in paragraphs:
        any_by_title.setdefault(p["title"], p)
        if p.get("is_supporting"):
            supporting[p["title"]].append(p)
    seen: dict[tuple[str, int], int] = defaultdict(int)
    facts: list[GoldFact] = []
    for entry in row.get("supporting_facts") or []:
        if not isinstance(entry, (list, tuple)) or len(entry) != 2:
            raise EvaluationError(
                f"row {row.get('id')!r}: supporting fact {entry!r} is not [title, sentence_index]",
                hint="check the file follows the bench/dev schema (bench/README.md)",
            )
        title, index = str(entry[0]), int(entry[1])
        nth = seen[(title, index)]
        seen[(title, index)] += 1
        candidates = supporting.get(title) or []
        para = candidates[min(nth, len(candidates) - 1)] if candidates else any_by_title.get(title)
        if para is None or not 0 <= index < len(para["sentences"]):
            raise EvaluationError(
                f"row {row.get('id')!r}: supporting fact [{title!r}, {index}] does not resolve "
                "to a sentence of the row's paragraphs",
                hint="fix or drop that row; every gold fact must name one of its paragraphs",
            )
        text = para["sentences"][index]
        units = tuple(split_sentences(text)) if para_level else (normalise(text),)
        units = tuple(u for u in units if u) or (normalise(text),)
        facts.append(
            GoldFact(
                paragraph=f"{para.get('idx')}:{title}", units=units, title=title, sentence=index
            )
        )
    # MuSiQue lists a gold paragraph once per fact; identical (paragraph, sentence) pairs are one fact.
    unique: dict[tuple[str, int], GoldFact] = {}
    for fact in facts:
        unique.setdefault((fact.paragraph, fact.sentence), fact)
    return list(unique.values())


def load_dataset(path: str | Path, *, limit: int | None = None) -> list[QAExample]:
    """Read a ``.jsonl`` QA file; ``limit`` keeps the first N questions."""
    path = Path(path)
    examples = [
        QAExample(
            id=str(row.get("id", lineno)),
            question=row["question"],
            answer=str(row.get("answer", "")),
            dataset=str(row.get("dataset") or path.stem),
            gold=resolve_gold(row),
            paragraphs=row.get("paragraphs") or [],
            type=row.get("type"),
        )
        for lineno, row in read_qa_rows(path, limit=limit)
    ]
    if not examples:
        raise EvaluationError(f"{path} holds no questions", hint="is it the right file?")
    return examples


def dataset_name(path: str | Path) -> str:
    """``hotpotqa`` for ``.../hotpotqa.jsonl``: the default corpus is ``qa-<name>``."""
    return Path(path).stem
