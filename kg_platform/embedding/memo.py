"""Vectors a step of ingestion already computed, offered to a later step of the same ingestion.

Why: with the SAGE segmenter every sentence is embedded to decide the cuts, and a piece is very
often one sentence; without this the same text goes through the model twice. The memo is
bounded (oldest entries go first) and keyed by the embedder's identity as well as the text, so
a vector never crosses models. It only saves model time: a miss simply embeds again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable

import numpy as np

__all__ = ["SentenceMemo", "embedder_key", "sentence_memo"]


def embedder_key(embedder: object) -> tuple:
    """What makes two embedders give the same vectors: class, model and quantisation."""
    return (
        type(embedder).__name__,
        getattr(embedder, "model_name", None),
        getattr(embedder, "quantize", None),
        getattr(embedder, "dimension", None),
    )


class SentenceMemo:
    """A thread-safe, size-bounded map ``(embedder key, text) -> vector`` (20k 384-d vectors
    are about 30 MB: several documents' sentences, far fewer than a whole corpus's)."""

    def __init__(self, max_items: int = 20_000) -> None:
        self.max_items = max_items
        self._items: OrderedDict[tuple, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0

    def put(self, key: tuple, texts: Iterable[str], vectors: np.ndarray) -> None:
        with self._lock:
            for text, vector in zip(texts, vectors):
                self._items[(key, text)] = vector
                self._items.move_to_end((key, text))
            while len(self._items) > self.max_items:
                self._items.popitem(last=False)

    def take(self, key: tuple, texts: Iterable[str]) -> dict[str, np.ndarray]:
        """The remembered vectors among ``texts`` (entries stay: a later batch may need them)."""
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for text in texts:
                vector = self._items.get((key, text))
                if vector is not None:
                    found[text] = vector
            self.hits += len(found)
        return found

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


_MEMO = SentenceMemo()


def sentence_memo() -> SentenceMemo:
    """The process-wide memo ingestion's steps share."""
    return _MEMO
