"""Knowledge atomizing (PIKE-RAG paper): the questions each chunk answers become its index.

For every pending chunk of the configured levels the LLM lists diverse, self-contained questions
the chunk answers (title prefixed, temperature 0.7 as in the paper); each question is embedded
with the platform embedder and stored as ``(:AtomicQuestion)-[:ANSWERED_BY]->(:Chunk)`` in the
``atomic_question_embedding`` vector index. Questions are deduplicated per chunk (small models
repeat themselves) and capped at ``distill.max_questions``.
"""

from __future__ import annotations

import logging

from kg_platform.config import Settings
from kg_platform.embedding import Embedder
from kg_platform.errors import LLMError
from kg_platform.graph import GraphClient
from kg_platform.llm import LLMClient, get_prompt
from kg_platform.llm.replies import AtomicQuestions
from kg_platform.distilling.common import (
    PendingChunk,
    StepReport,
    make_id,
    pending_chunks,
    replace_chunk_output,
)
from kg_platform.graph.params import vector_param

log = logging.getLogger(__name__)

PROMPT = "atomize"


def _min_question_ok(q: str) -> bool:
    return len(q) >= 8 and any(ch.isalpha() for ch in q)


def atomize_rows(
    rows: list[PendingChunk], llm: LLMClient, settings: Settings
) -> list[tuple[PendingChunk, list[str] | LLMError]]:
    """LLM questions per chunk (no I/O besides the LLM)."""
    cfg = settings.tuning.distill
    variables = [
        {"title": r.title or "(untitled)", "text": r.text, "max_questions": cfg.max_questions}
        for r in rows
    ]
    outs = llm.map_structured(PROMPT, variables, temperature=cfg.atomize_temperature)
    result: list[tuple[PendingChunk, list[str] | LLMError]] = []
    for row, out in zip(rows, outs):
        if isinstance(out, AtomicQuestions):
            qs = [q if q.endswith("?") else q + "?" for q in out.questions if _min_question_ok(q)]
            result.append((row, qs[: cfg.max_questions]))
        else:
            result.append((row, out if isinstance(out, LLMError) else LLMError(str(out))))
    return result


def atomize(
    graph: GraphClient,
    embedder: Embedder,
    llm: LLMClient,
    settings: Settings,
    *,
    corpus: str,
    source_ids: list[str] | None = None,
    batch: int = 32,
) -> StepReport:
    """Atomize every pending chunk of ``corpus``; resumable (see ``distilling.common``)."""
    version = get_prompt(PROMPT).key
    report = StepReport("atomic")
    for rows in pending_chunks(
        graph,
        corpus=corpus,
        levels=settings.tuning.distill.levels,
        step="atomic",
        version=version,
        source_ids=source_ids,
        batch=batch,
    ):
        done: list[str] = []
        atoms: list[dict] = []
        for row, out in atomize_rows(rows, llm, settings):
            report.chunks += 1
            if isinstance(out, LLMError):
                report.failed.append(row.id)
                report.errors.append(f"{row.id}: {str(out).splitlines()[0]}")
                continue
            done.append(row.id)
            atoms.extend(
                {"id": make_id("atomic", row.id, q), "chunk_id": row.id, "text": q} for q in out
            )
        if atoms:
            vecs = embedder.embed([a["text"] for a in atoms])
            for a, v in zip(atoms, vecs):
                a["embedding"] = vector_param(v)
        if done:
            replace_chunk_output(
                graph,
                step="atomic",
                version=version,
                chunk_ids=done,
                writes=[("distill/write_atoms", atoms)],
                corpus=corpus,
            )
            report.written += len(atoms)
        log.info("atomized %d chunks (%d questions so far)", report.chunks, report.written)
    return report


__all__ = ["atomize", "atomize_rows"]
