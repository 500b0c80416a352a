"""F2: sentence splitting must be linear in the paragraph length and unchanged in its output.

The old splitter searched backwards from the start of the paragraph for every candidate boundary,
so a soft-wrapped text file (single newlines, one huge paragraph) took minutes at 0.5 MB. The
tests compare the new splitter with the old rule on the real bench documents and count regex
work instead of timing it.
"""

from __future__ import annotations

import re

import pytest

from kg_platform.segmenting import sentences
from tests.conftest import DOCUMENTS

pytestmark = pytest.mark.faults


def _old_word_before(text: str, end: int) -> str:
    match = sentences._WORD_BEFORE.search(text, 0, end)
    return match.group(1) if match else ""


def _bench_texts() -> list[str]:
    from kg_platform.parsing import parse_file

    texts = []
    for path in sorted(DOCUMENTS.rglob("*")):
        if path.is_file() and path.suffix.lower() in {".md", ".html", ".docx", ".pdf"}:
            texts.extend(
                block.text for section in parse_file(path).sections() for block in section.blocks
            )
            if path.suffix == ".md":  # the raw file too: long soft-wrapped paragraphs
                texts.append(path.read_text(encoding="utf-8", errors="replace"))
    return texts


def _soft_wrapped(n_bytes: int) -> str:
    """One paragraph of prose with single newlines, abbreviations, initials and decimals."""
    line = (
        "Dr. J. R. Smith measured 3.5 units, e.g. in the U.S. lab. The result held.\n"
        "It was not what they expected! Was it? Yes... mostly. See Fig. 2 and Sec. 4.\n"
    )
    return (line * (n_bytes // len(line) + 1))[:n_bytes]


def test_same_sentences_as_the_old_rule_on_bench_documents(monkeypatch):
    texts = _bench_texts()
    assert texts, f"no bench documents under {DOCUMENTS}"
    new = [sentences.split_sentences(t) for t in texts]
    monkeypatch.setattr(sentences, "_word_before", _old_word_before)
    old = [sentences.split_sentences(t) for t in texts]
    assert sum(len(s) for s in new) > 100
    assert new == old


def test_same_sentences_as_the_old_rule_on_soft_wrapped_text(monkeypatch):
    text = (
        _soft_wrapped(20_000) + " Word-with-dashes' and.dots.in.a.very.long.token" * 40 + ". End."
    )
    new = sentences.split_sentences(text)
    monkeypatch.setattr(sentences, "_word_before", _old_word_before)
    assert new == sentences.split_sentences(text)
    assert len(new) > 500


class _CountingPattern:
    """Wraps ``_WORD_BEFORE`` and adds up how many characters each search may scan."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern, self.scanned = pattern, 0

    def search(self, text: str, pos: int = 0, endpos: int | None = None):
        end = len(text) if endpos is None else endpos
        self.scanned += end - pos
        return self.pattern.search(text, pos, end)


def _scanned(monkeypatch, text: str) -> int:
    counter = _CountingPattern(sentences._WORD_BEFORE)
    monkeypatch.setattr(sentences, "_WORD_BEFORE", counter)
    sentences.split_sentences(text)
    monkeypatch.undo()
    return counter.scanned


def test_work_grows_linearly_with_a_soft_wrapped_paragraph(monkeypatch):
    small = _scanned(monkeypatch, _soft_wrapped(50_000))
    large = _scanned(monkeypatch, _soft_wrapped(200_000))
    assert small > 0
    # linear: 4x the text, about 4x the characters scanned (quadratic would be about 16x)
    assert large / small < 6, (small, large)


def test_two_megabyte_single_paragraph_completes():
    text = _soft_wrapped(2_000_000)
    out = sentences.split_sentences(text)
    assert len(out) > 50_000
    assert out[0].startswith("Dr. J. R. Smith measured 3.5 units")
