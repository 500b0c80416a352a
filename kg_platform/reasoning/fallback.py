"""The answer when no LLM is configured: the best evidence sentences, clearly marked as such.

Nothing is generated, so nothing is invented: the retrieved chunks are split into sentences
(the ingestion's own splitter), and the answer quotes the first chunk's sentence closest to the
question (by cosine), then the closest sentences of all the chunks. The answer text starts with
``[no LLM configured]`` and the result lists the steps that were skipped.

Why the first chunk's sentence first: the chunks come from the default path (strategy, then the
late rerank), which reads the question's words against each whole chunk and ranks far better
than one sentence's cosine; a sentence that restates the question ("MarkItDown has optional
dependencies for various file formats") is closer by cosine than the list that answers it. The
rest go by cosine, since a second hop's answer ("born in Liverpool") is often not its chunk's
first. The rules compared, and how often each quotes gold evidence, are in the lab's record
(lab/results/2026-11-29/evidence-sentences/).
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
    """(cosine, index into context, sentence) for ``top`` sentences: the first chunk's closest
    sentence, then the closest of all (each sentence quoted once)."""
    pairs = [(i, s) for i, ev in enumerate(context) for s in _sentences(ev.text)]
    if not pairs:
        return []
    vecs = embedder.embed([question, *[s for _, s in pairs]])
    sims = vecs[1:] @ vecs[0]
    by_cosine = [int(j) for j in np.argsort(-sims, kind="stable")]
    first = next(j for j in by_cosine if pairs[j][0] == pairs[0][0])
    order = [first] + [j for j in by_cosine if j != first]
    seen: set[str] = set()
    out: list[tuple[float, int, str]] = []
    for j in order:
        i, sentence = pairs[j]
        key = " ".join(sentence.lower().split())
        if key in seen:
            continue
        seen.add(key)
        out.append((float(sims[j]), i, sentence))
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
