"""``KnowledgePlatform``: the one front door of kg-platform.

It is the only place that wires settings, the graph connection, the embedder, the LLM and the
retrieval strategies together; ``kgp`` commands parse their arguments, call one of its methods and
print the typed result, and the jobs runner and the LangChain retriever call the same methods.
A feature therefore changes in its feature module (``ingest``, ``retrieval``, ``reasoning``,
``distilling``, ``jobs``) and is reachable from every entry point at once.

The graph and the embedder are created lazily (constructing the object is free and imports
neither the Neo4j driver nor ONNX Runtime), and the object holds no per-call state, so one
instance may serve many threads.

The verbs live in two modules by what they do, over the parts both need
(:mod:`kg_platform.sdk.parts`): :mod:`kg_platform.sdk.writing` (schema, ingestion, drops,
rebuilds, distillation, jobs, run records) and :mod:`kg_platform.sdk.reading` (strategies,
corpora, outlines, search, ask). This class is their union and the one name callers import.
"""

from __future__ import annotations

from typing import Any

from kg_platform.sdk.reading import ReadVerbs
from kg_platform.sdk.results import CorpusInfo, Retrieval
from kg_platform.sdk.writing import WriteVerbs

__all__ = ["CorpusInfo", "KnowledgePlatform", "Retrieval"]


class KnowledgePlatform(WriteVerbs, ReadVerbs):
    """A knowledge platform over one Neo4j database.

    Example (needs a running Neo4j: ``kgp neo4j start``, or ``NEO4J_URI``/``NEO4J_PASSWORD``)::

        >>> from kg_platform import KnowledgePlatform
        >>> with KnowledgePlatform.from_env() as kp:                    # doctest: +SKIP
        ...     kp.ingest(["ingestion/samples"], corpus="samples")
        ...     for item in kp.retrieve("What is MoG?", strategy="mog", k=3):
        ...         print(round(item.score, 3), item.source_title, item.text[:60])
        ...     print(kp.ask("What is MoG?", corpus="samples").render())

    Args:
        settings: the platform settings (default: :func:`kg_platform.config.get_settings`).
        graph: an open :class:`~kg_platform.graph.GraphClient` to use instead of connecting.
        embedder: an embedder to share (loading the model takes seconds).
    """

    @classmethod
    def from_env(cls, **overrides: Any) -> "KnowledgePlatform":
        """Settings from the environment and ``kgp.toml``, with keyword overrides.

        >>> kp = KnowledgePlatform.from_env(corpus="docs")   # nothing connects yet
        >>> kp.settings.corpus
        'docs'
        """
        from kg_platform.config import Settings

        return cls(Settings(**overrides))

    def __enter__(self) -> "KnowledgePlatform":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
