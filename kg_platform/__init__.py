"""kg-platform: a Neo4j-centric knowledge platform for retrieval-augmented generation.

One object does everything a Python user needs::

    from kg_platform import KnowledgePlatform

    with KnowledgePlatform.from_env() as kp:        # NEO4J_URI or the `kgp neo4j start` server
        report = kp.ingest(["docs/"], corpus="docs")
        items = kp.retrieve("How are chunks built?", strategy="mog", k=5, corpus="docs")
        answer = kp.ask("How are chunks built?", corpus="docs")

The names below are imported lazily (on first attribute access), so ``import kg_platform`` stays
cheap: no torch, no Neo4j driver until they are used.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "KnowledgePlatform": "kg_platform.sdk.platform",
    "Settings": "kg_platform.config",
    "get_settings": "kg_platform.config",
    "KGPError": "kg_platform.errors",
    "RetrievedItem": "kg_platform.retrieval.base",
    "IngestReport": "kg_platform.ingest.report",
    "RunRecord": "kg_platform.ingest.runs",
    "Answer": "kg_platform.reasoning.types",
    "Citation": "kg_platform.reasoning.types",
    "JobSpec": "kg_platform.jobs.spec",
    "JobRunResult": "kg_platform.jobs.runner",
}

__all__ = sorted(_EXPORTS) + ["__version__"]

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from kg_platform.config import Settings, get_settings
    from kg_platform.errors import KGPError
    from kg_platform.ingest.report import IngestReport
    from kg_platform.ingest.runs import RunRecord
    from kg_platform.jobs.runner import JobRunResult
    from kg_platform.jobs.spec import JobSpec
    from kg_platform.reasoning.types import Answer, Citation
    from kg_platform.retrieval.base import RetrievedItem
    from kg_platform.sdk.platform import KnowledgePlatform


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kg_platform' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
