"""QA benchmark files (``bench/dev/*.jsonl``) as a pooled corpus, and gold facts -> pieces.

Each distinct candidate paragraph (by ``doc_id``) becomes one Source with
``uri = qa://<dataset>/<doc_id>``, title = the paragraph title, one root Section. Sentence ``i`` of
the paragraph keeps sentence index ``i`` (stored in ``Piece.sentences``), so:

* HotpotQA / 2Wiki: given sentences are kept whole (a piece is one or two of them, never a part),
  so a gold fact ``[title, i]`` maps to exactly one piece.
* MuSiQue / PubMedQA: support is paragraph- or section-level; each given "sentence" is split by the
  sentence splitter and all its parts keep index ``i``, so a gold fact maps to the *set* of pieces
  made from it. Count it covered when any of them is retrieved.

:func:`gold_pieces` answers that mapping for one question; :func:`gold_pieces_many` for many in
one query. A paragraph already stored with the same content hash is reused (skipped).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from kg_platform.config import Settings
from kg_platform.embedding.base import Embedder
from kg_platform_lab.qa_file import read_qa_rows
from kg_platform.errors import EvaluationError, IngestionError
from kg_platform.graph.client import GraphClient
from kg_platform.ingest.ids import source_id
from kg_platform.ingest.plan import SectionInput, Segment, SourceInput
from kg_platform.ingest.report import IngestReport
from kg_platform.ingest.session import IngestSession, Progress
from kg_platform.segmenting.sentences import split_sentences
from kg_platform_lab.queries import lab_read

__all__ = [
    "ingest_qa",
    "gold_pieces",
    "gold_pieces_many",
    "paragraph_uri",
    "read_questions",
    "fact_paragraphs",
    "PARAGRAPH_LEVEL",
]

#: Datasets whose gold "sentence" is a paragraph or abstract section: split into real sentences.
PARAGRAPH_LEVEL = frozenset({"musique", "pubmedqa"})


def paragraph_uri(dataset: str, doc_id: str) -> str:
    return f"qa://{dataset}/{doc_id}"


def read_questions(path: str | Path, limit: int | None = None) -> Iterator[dict[str, Any]]:
    for _, row in read_qa_rows(path, required=("paragraphs",), limit=limit):
        yield row


def _paragraph_input(corpus: str, dataset: str, para: dict[str, Any]) -> SourceInput:
    title = str(para.get("title") or "").strip()
    given = [str(s) for s in para.get("sentences") or []]
    sentences: list[str] = []
    indexes: list[int] = []
    split = dataset in PARAGRAPH_LEVEL
    for i, raw in enumerate(given):
        text = raw.strip()
        if not text:
            continue
        parts = split_sentences(text) if split else [text]
        sentences.extend(parts)
        indexes.extend([i] * len(parts))
    content = json.dumps([title, given], ensure_ascii=False).encode("utf-8")
    section = SectionInput(
        title=title,
        level=0,
        path=title,
        parent=None,
        segments=[Segment("text", sentences, None, indexes)],
    )
    return SourceInput(
        corpus=corpus,
        uri=paragraph_uri(dataset, para["doc_id"]),
        title=title,
        mime="application/x-qa-paragraph",
        sha256=hashlib.sha256(content).hexdigest(),
        bytes=len(content),
        sections=[section],
    )


def _same_text_key(para: dict[str, Any]) -> tuple[str, str]:
    """A paragraph's title and text with every space removed: the same passage whatever the
    file's sentence split or spacing."""
    text = para.get("text")
    if not text:
        text = "".join(str(s) for s in para.get("sentences") or [])
    return str(para.get("title") or "").strip(), "".join(str(text).split())


def read_distractors(
    path: str | Path, present: dict[str, tuple[str, dict[str, Any]]]
) -> tuple[list[tuple[str, dict[str, Any]]], int]:
    """The passages of a distractor JSONL (``bench/distractors/*.jsonl``: ``doc_id``, ``dataset``,
    ``title``, ``text``, ``sentences``) that are not already among ``present`` (doc_id ->
    (dataset, paragraph)) by doc_id or by title and text; and how many were skipped so."""
    path = Path(path)
    seen_ids = set(present)
    seen_texts = {_same_text_key(p) for _, p in present.values()}
    out: list[tuple[str, dict[str, Any]]] = []
    skipped = 0
    try:
        fh = path.open(encoding="utf-8")
    except OSError as exc:
        raise EvaluationError(
            f"cannot read the distractor file {path}: {exc.strerror or exc}",
            hint="pass a JSONL of passages such as bench/distractors/2wikimultihopqa-hipporag2.jsonl",
        ) from exc
    with fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise EvaluationError(
                    f"{path}:{n} is not JSON: {exc.msg}",
                    hint="one passage object per line (doc_id, dataset, title, text, sentences)",
                ) from exc
            if not isinstance(row, dict) or not row.get("doc_id") or not row.get("sentences"):
                raise EvaluationError(
                    f"{path}:{n} is not a passage (needs doc_id and sentences)",
                    hint="see bench/distractors/README.md for the schema",
                )
            key = _same_text_key(row)
            if row["doc_id"] in seen_ids or key in seen_texts:
                skipped += 1
                continue
            seen_ids.add(row["doc_id"])
            seen_texts.add(key)
            out.append((str(row.get("dataset") or path.stem), row))
    return out, skipped


def ingest_qa(
    graph: GraphClient,
    settings: Settings,
    path: str | Path,
    corpus: str,
    limit: int | None = None,
    *,
    progress: Progress | None = None,
    embedder: Embedder | None = None,
    distractors: str | Path | None = None,
) -> IngestReport:
    """Ingest the candidate paragraphs of the first ``limit`` questions of ``path``, and with
    ``distractors`` (a passage JSONL) its passages that are not among them already."""
    paragraphs: dict[str, tuple[str, dict[str, Any]]] = {}
    for q in read_questions(path, limit):
        dataset = str(q.get("dataset") or Path(path).stem)
        for para in q["paragraphs"]:
            if "doc_id" not in para:
                raise EvaluationError(
                    f"a paragraph of question {q.get('id')} has no doc_id",
                    hint="see bench/README.md for the unified schema",
                )
            paragraphs.setdefault(para["doc_id"], (dataset, para))
    paths = [str(path)]
    if distractors is not None:
        extra, _ = read_distractors(distractors, paragraphs)
        for dataset, para in extra:
            paragraphs[para["doc_id"]] = (dataset, para)
        paths.append(str(distractors))
    session = IngestSession(
        graph, settings, corpus, embedder=embedder, progress=progress, paths=paths
    )
    try:
        session.emit(event="start", total=len(paragraphs), run_id=session.run_id)
        for doc_id, (dataset, para) in paragraphs.items():
            inp = _paragraph_input(corpus, dataset, para)
            if not inp.sections[0].segments[0].sentences:
                session.error(
                    inp.uri,
                    IngestionError(
                        f"paragraph {doc_id} has no sentences", hint="the dataset row is empty"
                    ),
                )
                continue
            if session.is_unchanged(inp.uri, inp.sha256):
                session.skip(inp.uri)
                continue
            session.add(inp)
        session.flush()
    except BaseException as exc:  # noqa: BLE001 - recorded as a failed run (re-raised if ^C)
        return session.finish(exc)
    return session.finish()


def fact_paragraphs(question: dict[str, Any]) -> list[list[str]]:
    """For each supporting fact, the doc_ids of the gold paragraphs it can refer to.

    Titles repeat in MuSiQue, so a fact's title is resolved among the question's *supporting*
    paragraphs first (all of them when several share the title), then among all paragraphs.
    """
    out: list[list[str]] = []
    paras = question.get("paragraphs") or []
    for title, _ in question.get("supporting_facts") or []:
        gold = [p["doc_id"] for p in paras if p.get("title") == title and p.get("is_supporting")]
        out.append(gold or [p["doc_id"] for p in paras if p.get("title") == title])
    return out


def gold_pieces_many(
    graph: GraphClient, corpus: str, questions: Sequence[dict[str, Any]]
) -> list[list[set[str]]]:
    """For each question, for each supporting fact, the ids of the pieces holding that fact."""
    facts: list[dict[str, Any]] = []
    for qi, q in enumerate(questions):
        dataset = str(q.get("dataset") or "")
        for fi, (doc_ids, (_, sent)) in enumerate(
            zip(fact_paragraphs(q), q.get("supporting_facts") or [])
        ):
            for doc_id in doc_ids:
                facts.append(
                    {
                        "key": f"{qi}:{fi}",
                        "sentence": int(sent),
                        "source_id": source_id(corpus, paragraph_uri(dataset, doc_id)),
                    }
                )
    found: dict[str, set[str]] = {}
    for start in range(0, len(facts), 2000):
        for rec in lab_read(graph, "qa_ingest/gold_pieces", facts=facts[start : start + 2000]):
            found.setdefault(rec["key"], set()).update(rec["pieces"])
    return [
        [found.get(f"{qi}:{fi}", set()) for fi in range(len(q.get("supporting_facts") or []))]
        for qi, q in enumerate(questions)
    ]


def gold_pieces(graph: GraphClient, corpus: str, question: dict[str, Any]) -> list[set[str]]:
    """Piece ids per supporting fact of one question (empty set = fact not in the graph)."""
    return gold_pieces_many(graph, corpus, [question])[0]
