"""A bounded, thread-safe cache of per-text model outputs (vectors, word-piece states).

Rerankers see the same candidates again and again: every strategy of an evaluation reranks
mostly the same chunks of a question, and the self-feedback loop reranks one list up to four
times. Keys are ``(model name, text)``, so two embedders never share an entry.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from typing import Generic, TypeVar

V = TypeVar("V")


class TextCache(Generic[V]):
    """Least-recently-used map from ``(model, text)`` to a computed value, at most ``size``."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[tuple[str, str], V] = OrderedDict()
        self._lock = threading.Lock()

    def get_many(
        self, model: str, texts: Sequence[str], compute: Callable[[list[str]], Iterable[V]]
    ) -> list[V]:
        """The value of each text, calling ``compute`` once on the distinct texts not cached
        (it returns one value per text, in order: a list, or an array's rows)."""
        with self._lock:
            found = {t: self._items[(model, t)] for t in texts if (model, t) in self._items}
            for t in found:
                self._items.move_to_end((model, t))
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        if missing:
            found.update(zip(missing, compute(missing)))
            with self._lock:
                for t in missing:
                    self._items[(model, t)] = found[t]
                while len(self._items) > self.size:
                    self._items.popitem(last=False)
        return [found[t] for t in texts]
