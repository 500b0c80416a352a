"""Token counting: ordinary-text counts (special-token spellings are text), a batch counted in
the caller's thread, the same numbers as tiktoken's own ``encode(..., disallowed_special=())``."""

from __future__ import annotations

import threading

from kg_platform.segmenting.fixed import make_units, split_long_units
from kg_platform.tokens import count_tokens, count_tokens_batch, encoding, truncate_tokens

TEXTS = [
    "The platypus lays eggs.",
    "A text that spells <|endoftext|> and <|fim_prefix|> is ordinary text here.",
    "",
    "Ünïcödé, emoji 🦆 and a lone surrogate \ud800 survive.",
]


def _reference(text: str) -> list[int]:
    return encoding().encode(text, disallowed_special=())


def test_counts_equal_tiktokens_encode_with_special_tokens_as_text() -> None:
    assert count_tokens_batch(TEXTS) == [len(_reference(t)) for t in TEXTS]
    assert [count_tokens(t) for t in TEXTS] == [len(_reference(t)) for t in TEXTS]
    assert count_tokens_batch([]) == []


def test_a_batch_starts_no_thread(monkeypatch) -> None:
    started: list[threading.Thread] = []
    real = threading.Thread.start

    def spy(self: threading.Thread) -> None:
        started.append(self)
        real(self)

    encoding()  # loaded outside the spy
    monkeypatch.setattr(threading.Thread, "start", spy)
    counts = count_tokens_batch(TEXTS * 10)
    assert started == [] and len(counts) == 40


def test_truncation_and_long_sentence_cuts_keep_their_token_ids() -> None:
    text = " ".join(f"word{i} <|endoftext|>" for i in range(200))
    ids = _reference(text)
    assert truncate_tokens(text, 50) == encoding().decode(ids[:50])
    assert truncate_tokens("short", 50) == "short"
    (unit,) = make_units([text])
    parts = split_long_units([unit], 128, 2.0)
    assert [p.text for p in parts] == [
        encoding().decode(ids[i : i + 128]).strip() for i in range(0, len(ids), 128)
    ]
