"""The rerank's word-piece states of candidate texts, kept on disk between processes.

Why: one ``kgp retrieve`` is a process of its own, so the in-process LRU of
:mod:`~kg_platform.retrieval.rerank.late_interaction` starts empty every time, and reading the
~30 candidates through the model again is most of the CPU a retrieval costs. The candidates are
chunks of the corpus, which the next question reranks again. The states are a pure function of
the model file and the text when the model reads each text in a call of its own (the int8 copy,
:meth:`~kg_platform.embedding.onnx.OnnxEmbedder.embed_tokens`), so a stored state is exactly
the one a fresh read would give: the same ranking and the same scores, at the cost of a lookup.

One SQLite file per cache folder (``<cache>/rerank-states.sqlite``), rows keyed by a digest of
the model file's name (which names its content digest and quantisation), the reading's window
count and the text; at most ``rerank.state_cache_mb`` megabytes (the oldest rows go first;
``0`` turns the store off). The store never fails a retrieval: an unreadable or locked file is
logged and the states are computed as without it.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

__all__ = ["StateStore"]

_log = logging.getLogger(__name__)

State = tuple[np.ndarray, np.ndarray, np.ndarray]  # (vector, float16 unit states, offsets)

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS states (key BLOB PRIMARY KEY, dim INTEGER NOT NULL, "
    "vector BLOB NOT NULL, tokens BLOB NOT NULL, offsets BLOB NOT NULL, "
    "size INTEGER NOT NULL, written REAL NOT NULL) WITHOUT ROWID"
)


class StateStore:
    """Word-piece states by ``(model, text)`` in one SQLite file of at most ``max_mb`` MB."""

    def __init__(self, path: Path, max_mb: int) -> None:
        self.path = Path(path)
        self.max_bytes = int(max_mb) * 1024 * 1024

    @staticmethod
    def key(model: str, text: str) -> bytes:
        return hashlib.sha256(f"{model}\0{text}".encode("utf-8", "surrogatepass")).digest()

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(self.path, timeout=2.0, isolation_level=None)
        con.execute(_SCHEMA)
        return con

    def get_many(self, model: str, texts: Sequence[str]) -> dict[str, State]:
        """The stored states of those ``texts`` the file holds (by text)."""
        if not texts or not self.path.exists():
            return {}
        keys = {self.key(model, t): t for t in dict.fromkeys(texts)}
        try:
            con = self._connect()
            try:
                rows = con.execute(
                    "SELECT key, dim, vector, tokens, offsets FROM states WHERE key IN "
                    f"({','.join('?' * len(keys))})",
                    list(keys),
                ).fetchall()
            finally:
                con.close()
        except sqlite3.Error as exc:
            _log.debug(
                "rerank state store %s unreadable (%s): computing the states", self.path, exc
            )
            return {}
        found: dict[str, State] = {}
        for key, dim, vector, tokens, offsets in rows:
            found[keys[bytes(key)]] = (
                np.frombuffer(vector, dtype=np.float32).copy(),
                np.frombuffer(tokens, dtype=np.float16).reshape(-1, dim).copy(),
                np.frombuffer(offsets, dtype=np.int64).reshape(-1, 2).copy(),
            )
        return found

    def put_many(self, model: str, states: Mapping[str, State]) -> None:
        """Store ``states`` (by text), then drop the oldest rows while the file is too big."""
        if not states:
            return
        now = time.time()
        rows = []
        for text, (vector, tokens, offsets) in states.items():
            blobs = [
                np.ascontiguousarray(vector, dtype=np.float32).tobytes(),
                np.ascontiguousarray(tokens, dtype=np.float16).tobytes(),
                np.ascontiguousarray(offsets, dtype=np.int64).tobytes(),
            ]
            size = sum(len(b) for b in blobs)
            rows.append((self.key(model, text), int(vector.shape[0]), *blobs, size, now))
        try:
            con = self._connect()
            try:
                con.execute("BEGIN IMMEDIATE")
                con.executemany("INSERT OR REPLACE INTO states VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
                con.execute("COMMIT")
                self._trim(con)
            finally:
                con.close()
        except sqlite3.Error as exc:
            _log.debug("rerank state store %s not written (%s)", self.path, exc)

    def _trim(self, con: sqlite3.Connection) -> None:
        """While the stored rows exceed :attr:`max_bytes`, drop the oldest tenth of them."""
        while True:
            (used, count) = con.execute(
                "SELECT COALESCE(SUM(size), 0), COUNT(*) FROM states"
            ).fetchone()
            if used <= self.max_bytes or count == 0:
                break
            con.execute(
                "DELETE FROM states WHERE key IN (SELECT key FROM states ORDER BY written LIMIT ?)",
                (max(1, count // 10),),
            )
