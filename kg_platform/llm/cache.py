"""On-disk response cache: a re-run costs nothing and an interrupted distillation resumes.

The key is a hash of everything that determines a reply (model, messages, temperature, max
tokens, stop sequences), so changing a prompt's text or version, or the model, misses the cache.
Stored in one sqlite file (``settings.cache_dir/llm/responses.sqlite``); the file also keeps a
log of structured outputs that stayed invalid after the repair retry.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT,
    text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS failures (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    prompt TEXT, version TEXT, model TEXT, error TEXT, reply TEXT, created REAL
);
"""


def cache_key(model: str, messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    payload = json.dumps(
        {"model": model, "messages": messages, "params": params},
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ResponseCache:
    """Thread-safe sqlite store of replies keyed by :func:`cache_key`."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.executescript(_SCHEMA)
            self._db.commit()

    def get(self, key: str) -> tuple[str, int, int] | None:
        with self._lock:
            row = self._db.execute(
                "SELECT text, prompt_tokens, completion_tokens FROM responses WHERE key = ?", (key,)
            ).fetchone()
        return (row[0], int(row[1]), int(row[2])) if row else None

    def put(
        self, key: str, model: str, text: str, prompt_tokens: int, completion_tokens: int
    ) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?)",
                (key, model, text, prompt_tokens, completion_tokens, time.time()),
            )
            self._db.commit()

    def delete(self, key: str) -> None:
        """Forget one reply (an unusable one, so a re-run asks the model again)."""
        with self._lock:
            self._db.execute("DELETE FROM responses WHERE key = ?", (key,))
            self._db.commit()

    def record_failure(self, prompt: str, version: str, model: str, error: str, reply: str) -> None:
        with self._lock:
            self._db.execute(
                "INSERT INTO failures (prompt, version, model, error, reply, created) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (prompt, version, model, error, reply, time.time()),
            )
            self._db.commit()

    def failures(self, limit: int = 100) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT prompt, version, model, error, reply, created FROM failures "
                "ORDER BY id DESC LIMIT ?",
                (limit,),
            ).fetchall()
        return [
            dict(zip(("prompt", "version", "model", "error", "reply", "created"), r)) for r in rows
        ]

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()
