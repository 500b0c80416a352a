"""Distil a corpus with the configured LLM: the one place that opens and closes it for that.

The SDK's ``distill`` (which ``kgp distill`` and ``kgp ingest --distill`` call) and the jobs
runner share this function, so the LLM's lifetime around a distillation is decided once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from kg_platform.distilling.runner import DistillReport, distill_corpus
from kg_platform.llm.session import open_llm

if TYPE_CHECKING:
    from kg_platform.config import Settings
    from kg_platform.embedding import Embedder
    from kg_platform.graph import GraphClient


def distill_with_configured_llm(
    graph: "GraphClient",
    embedder: "Embedder",
    settings: "Settings",
    *,
    corpus: str,
    steps: str | Sequence[str] | None = None,
    echo: Callable[[str], None] | None = None,
    extractor: str | None = None,
) -> DistillReport:
    """:func:`distill_corpus` with ``settings``' LLM, closed afterwards (skipped without one)."""
    with open_llm(settings) as llm:
        return distill_corpus(
            graph,
            embedder,
            llm,
            settings,
            corpus=corpus,
            steps=steps if steps is None or isinstance(steps, str) else list(steps),
            echo=echo,
            extractor=extractor,
        )
