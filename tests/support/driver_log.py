"""The Neo4j driver's retry warnings, for the tests that count them."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["driver_retries"]


class _Retries(logging.Handler):
    """Keeps the driver's "Transaction failed and will be retried" warnings."""

    def __init__(self, seen: list[str]) -> None:
        super().__init__(logging.WARNING)
        self.seen = seen

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if "will be retried" in message:
            self.seen.append(message)


@contextmanager
def driver_retries() -> Iterator[list[str]]:
    """The driver's retry warnings while the block runs (the list fills as they come). The
    ``neo4j`` logger is set to WARNING for the block, since an in-process ``kgp`` command quiets
    it to CRITICAL for its whole process, and its level is restored afterwards."""
    seen: list[str] = []
    handler = _Retries(seen)
    driver_log = logging.getLogger("neo4j")
    level = driver_log.level
    driver_log.addHandler(handler)
    driver_log.setLevel(logging.WARNING)
    try:
        yield seen
    finally:
        driver_log.removeHandler(handler)
        driver_log.setLevel(level)
