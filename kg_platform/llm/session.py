"""``open_llm``: the configured LLM for the length of one ``with`` block, closed afterwards.

Every caller that needs the LLM for a bounded piece of work (distilling a corpus, answering a
question, collecting decomposer data) goes through this one context manager, so the "get it,
use it, close it even on error" sequence is written once and no HTTP connection pool leaks.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kg_platform.config import Settings
    from kg_platform.llm.client import LLMClient


@contextmanager
def open_llm(settings: "Settings") -> Iterator["LLMClient | None"]:
    """Yield the configured client, or ``None`` when no LLM is configured; close it on exit."""
    from kg_platform.llm.client import get_llm

    llm = get_llm(settings)
    try:
        yield llm
    finally:
        if llm is not None:
            llm.close()
