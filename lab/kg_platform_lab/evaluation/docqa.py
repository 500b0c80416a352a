"""Document QA: questions about long documents, scored by the evidence paragraphs they need.

The layout (``bench/longdoc``)::

    <folder>/papers/<doc_id>.md    the documents, ingested through the normal document path
    <folder>/questions.jsonl       {id, question, answer, doc_id, title, evidence,
                                    evidence_sets: [[paragraph, ...], ...]}

Why a metric of its own: a long document's chunks, pieces and hop groups cut paragraphs at
different places, so "was the gold paragraph returned" must be judged on text. A gold paragraph
counts as **found** when at least half of its sentences (split by the ingestion's own splitter,
normalised as every other metric) are each contained in one retrieved result. Per question:

* ``evidence_recall``: found paragraphs / gold paragraphs, for the best annotator (QASPER's
  own evaluator also takes the max over annotators);
* ``evidence_token_coverage``: cl100k tokens of the gold sentences returned / tokens of all gold
  sentences, for that same annotator;
* the QA report's keys keep their shape: ``paragraph_recall`` = evidence recall,
  ``sentence_recall`` = share of gold sentences returned, ``all_supporting_found`` = every gold
  paragraph found, ``rr`` = 1 / rank of the first result holding a gold sentence.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from kg_platform_lab.qa_file import read_qa_rows
from kg_platform.errors import EvaluationError
from kg_platform_lab.evaluation.metrics import GoldFact, QuestionScore, Ranked, normalise

QUESTIONS = "questions.jsonl"
PAPERS = "papers"


def is_docqa_folder(path: str | Path) -> bool:
    """True for a folder in the document-QA layout (``papers/`` and ``questions.jsonl``)."""
    p = Path(path)
    return p.is_dir() and (p / QUESTIONS).is_file() and (p / PAPERS).is_dir()


@dataclass
class DocQuestion:
    """One question about one document, with every annotator's evidence paragraphs."""

    id: str
    question: str
    answer: str
    doc_id: str
    title: str
    evidence_sets: list[list[str]]
    document: Path
    dataset: str = "docqa"
    type: str | None = None
    paragraphs: list[dict[str, Any]] = field(repr=False, default_factory=list)

    @cached_property
    def sentence_sets(self) -> list[list[list[str]]]:
        """Per annotator, per gold paragraph: its normalised sentences (split once)."""
        from kg_platform_lab.evaluation.datasets import split_sentences

        return [[split_sentences(p) or [normalise(p)] for p in ev] for ev in self.evidence_sets]

    @property
    def gold(self) -> list[GoldFact]:
        """The first annotator's paragraphs as facts (for per-question output and filters)."""
        return [
            GoldFact(
                paragraph=f"{self.doc_id}:{i}", units=tuple(sents), title=self.doc_id, sentence=i
            )
            for i, sents in enumerate(self.sentence_sets[0])
        ]

    def score(self, ranking: Sequence[Ranked], count: Callable[[str], int]) -> QuestionScore:
        return score_evidence(ranking, self.sentence_sets, count)


def load_docqa(folder: str | Path, *, limit: int | None = None) -> list[DocQuestion]:
    """Questions with non-empty evidence; a question whose document file is missing is an error."""
    folder = Path(folder).resolve()
    path = folder / QUESTIONS
    out: list[DocQuestion] = []
    hint = "each line needs id, question, doc_id and evidence_sets (see bench/longdoc/README.md)"
    for n, row in read_qa_rows(path, required=("id", "question", "doc_id"), hint=hint):
        try:
            sets = row.get("evidence_sets") or [row.get("evidence") or []]
            doc = folder / PAPERS / f"{row['doc_id']}.md"
            q = DocQuestion(
                id=str(row["id"]),
                question=row["question"],
                answer=str(row.get("answer", "")),
                doc_id=str(row["doc_id"]),
                title=str(row.get("title", "")),
                evidence_sets=[[p for p in s if p.strip()] for s in sets],
                document=doc,
                dataset=str(row.get("dataset", "docqa")),
                type=row.get("answer_type"),
            )
        except (KeyError, TypeError) as exc:
            raise EvaluationError(f"{path}:{n}: not a document-QA row ({exc})", hint=hint) from exc
        if not doc.is_file():
            raise EvaluationError(
                f"{path}:{n}: the document {doc} does not exist",
                hint=f"put the document at {PAPERS}/<doc_id>.md",
            )
        q.evidence_sets = [s for s in q.evidence_sets if s]
        out.append(q)
        if limit is not None and len(out) >= limit:
            break
    return out


def score_evidence(
    ranking: Sequence[Ranked],
    sentence_sets: Sequence[Sequence[Sequence[str]]],
    count: Callable[[str], int],
) -> QuestionScore:
    """Evidence recall and token coverage of a cut ranking, best annotator (see module doc).

    The best annotator is the one with the highest evidence recall, then token coverage.
    Empty ``sentence_sets`` (no evidence) cannot be scored: the caller skips such questions.
    """
    if not sentence_sets:
        raise ValueError("score_evidence needs at least one evidence set")
    texts = [normalise(r.text) for r in ranking]
    tokens = sum(count(r.text) for r in ranking)
    best: tuple[tuple[float, float], dict[str, Any]] | None = None
    for paragraphs in sentence_sets:
        flat = [s for sents in paragraphs for s in sents]
        where = {s: [i for i, t in enumerate(texts) if s and s in t] for s in set(flat)}
        found_paragraphs = sum(
            1 for sents in paragraphs if 2 * sum(1 for s in sents if where[s]) >= len(sents)
        )
        gold_tok = sum(count(s) for s in flat) or 1
        got_tok = sum(count(s) for s in flat if where[s])
        stats = {
            "recall": found_paragraphs / len(paragraphs),
            "coverage": got_tok / gold_tok,
            "sentences": sum(1 for s in flat if where[s]) / max(1, len(flat)),
            "all": 1.0 if found_paragraphs == len(paragraphs) else 0.0,
            "hits": [[j for j, s in enumerate(flat) if i in where[s]] for i in range(len(texts))],
        }
        key = (stats["recall"], stats["coverage"])
        if best is None or key > best[0]:
            best = (key, stats)
    assert best is not None
    stats = best[1]
    first = next((i + 1 for i, h in enumerate(stats["hits"]) if h), None)
    return QuestionScore(
        sentence_recall=stats["sentences"],
        paragraph_recall=stats["recall"],
        all_supporting_found=stats["all"],
        rr=1.0 / first if first else 0.0,
        context_tokens=tokens,
        ids=[r.id for r in ranking],
        hits=stats["hits"],
        first_hit_rank=first,
        evidence_recall=stats["recall"],
        evidence_token_coverage=stats["coverage"],
    )
