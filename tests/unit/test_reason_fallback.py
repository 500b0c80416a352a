"""The no-LLM answer's sentences: the closest sentence of the chunk the default path ranked
first, then the closest of all (:func:`kg_platform.reasoning.fallback.best_sentences`), with
the bundled embedder."""

from __future__ import annotations

from kg_platform.reasoning.fallback import best_sentences, evidence_answer
from kg_platform.reasoning.types import NO_LLM_MARK, Evidence

QUESTION = "What file formats can MarkItDown convert to Markdown?"
# ranked first: the list that answers, and a sentence far from the question
FIRST = Evidence(
    "c1",
    "MarkItDown currently supports the conversion from PDF, PowerPoint, Word, Excel, images "
    "and audio. The project started in 2024 at a small lab in Redmond.",
)
# ranked second: far from the question
FAR = Evidence("c0", "The weather in Lisbon was mild that spring, and the trams ran late.")
# ranked third: a sentence that restates the question without answering it
SECOND = Evidence(
    "c2", "MarkItDown has optional dependencies for converting various file formats to Markdown."
)


def cosine(embedder, text: str) -> float:
    q, t = embedder.embed([QUESTION, text])
    return float(q @ t)


def test_the_first_chunks_best_sentence_is_quoted_first_even_when_a_later_one_is_closer(
    embedder,
) -> None:
    answers = FIRST.text.split(" The project")[0]  # the first chunk's first sentence
    # what the rule is for: by cosine alone the restatement would be quoted first
    assert cosine(embedder, SECOND.text) > cosine(embedder, answers)
    picked = best_sentences(QUESTION, [FIRST, FAR, SECOND], embedder, top=3)
    # then the closest of all, wherever they were ranked: the restatement before the far chunk
    assert [(i, s) for _, i, s in picked[:2]] == [(0, answers), (2, SECOND.text)]
    assert len(picked) == 3 and picked[1][0] >= picked[2][0]


def test_fewer_sentences_than_asked_are_all_quoted_once(embedder) -> None:
    twice = Evidence("c3", SECOND.text)
    picked = best_sentences(QUESTION, [SECOND, twice], embedder, top=3)
    assert [s for _, _, s in picked] == [SECOND.text]  # the same sentence is quoted once


def test_the_evidence_answer_quotes_and_cites_in_that_order(embedder) -> None:
    answer = evidence_answer(
        QUESTION, [FIRST, SECOND], embedder, skipped=["answer generation"], strategy="auto", top=2
    )
    assert answer.answer.startswith(NO_LLM_MARK)
    assert [c.chunk_id for c in answer.citations] == ["c1", "c2"]
    assert answer.answer.index("PowerPoint") < answer.answer.index("optional dependencies")
