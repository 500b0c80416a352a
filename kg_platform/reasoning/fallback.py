"""The answer when no LLM is configured: the best evidence sentences, clearly marked as such.

Nothing is generated, so nothing is invented: the retrieved chunks are split into sentences
(the ingestion's own splitter), each sentence is scored by cosine with the question, and the top
sentences are returned with their citations. The answer text starts with ``[no LLM configured]``
and the result lists the steps that were skipped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kg_platform.reasoning.types import NO_LLM_MARK, Answer, Citation, Evidence, TraceEvent

if TYPE_CHECKING:
    from kg_platform.embedding import Embedder

MIN_SENTENCE_CHARS = 20


def _sentences(text: str) -> list[str]:
    from kg_platform.segmenting.sentences import split_sentences

    return [s for s in split_sentences(text) if len(s) >= MIN_SENTENCE_CHARS] or (
        [text.strip()] if text.strip() else []
    )


def best_sentences(
    question: str, context: list[Evidence], embedder: "Embedder", top: int = 3
) -> list[tuple[float, int, str]]:
    """(cosine, index into context, sentence) for the ``top`` sentences, best first."""
    pairs = [(i, s) for i, ev in enumerate(context) for s in _sentences(ev.text)]
    if not pairs:
        return []
    vecs = embedder.embed([question, *[s for _, s in pairs]])
    sims = vecs[1:] @ vecs[0]
    order = np.argsort(-sims, kind="stable")
    seen: set[str] = set()
    out: list[tuple[float, int, str]] = []
    for j in order:
        i, sentence = pairs[int(j)]
        key = " ".join(sentence.lower().split())
        if key in seen:
            continue
        seen.add(key)
        out.append((float(sims[int(j)]), i, sentence))
        if len(out) >= top:
            break
    return out


def evidence_answer(
    question: str,
    context: list[Evidence],
    embedder: "Embedder",
    *,
    skipped: list[str],
    strategy: str,
    top: int = 3,
) -> Answer:
    """An :class:`Answer` made of evidence sentences, marked "no LLM configured"."""
    picked = best_sentences(question, context, embedder, top)
    citations: list[Citation] = []
    numbers: dict[int, int] = {}
    lines: list[str] = []
    for _cos, i, sentence in picked:
        ev = context[i]
        if i not in numbers:
            numbers[i] = len(citations) + 1
            citations.append(
                Citation(
                    n=numbers[i],
                    chunk_id=ev.chunk_id,
                    source_title=ev.source_title,
                    source_uri=ev.source_uri,
                    section=ev.section,
                    page=ev.page,
                    cited=True,
                    quote=sentence,
                )
            )
        lines.append(f'"{sentence}" [{numbers[i]}]')
    if lines:
        text = (
            f"{NO_LLM_MARK} No answer was generated; the best evidence sentences are: "
            + " ".join(lines)
        )
    else:
        text = f"{NO_LLM_MARK} No answer was generated and no evidence was found in the corpus."
    return Answer(
        question=question,
        answer=text,
        citations=citations,
        mode="no-llm",
        llm=False,
        skipped=skipped,
        notes=[
            "set KGP_LLM__BASE_URL and KGP_LLM__MODEL (or run `kgp llm serve-local`) to get "
            "generated answers"
        ],
        trace=[
            TraceEvent("retrieve", {"strategy": strategy, "chunks": len(context)}),
            TraceEvent(
                "evidence_sentences",
                {
                    "sentences": [
                        {"cos": round(c, 4), "chunk_id": context[i].chunk_id} for c, i, _ in picked
                    ]
                },
            ),
        ],
    )
