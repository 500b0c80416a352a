"""The parts every verb of :class:`~kg_platform.sdk.platform.KnowledgePlatform` stands on.

Why a module of its own: the write verbs (:mod:`kg_platform.sdk.writing`) and the read verbs
(:mod:`kg_platform.sdk.reading`) both need the same few things, and only these: the settings, the
graph connection and the embedder (created lazily, so constructing the object is free and imports
neither the Neo4j driver nor ONNX Runtime), a checked corpus name, the closing of runs whose
process died, and a retrieval context. They live here once, in :class:`PlatformParts`, which the
verb classes extend; ``KnowledgePlatform`` is their union.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from kg_platform.sdk.results import CorpusInfo

_log = logging.getLogger("kg_platform.sdk.platform")

if TYPE_CHECKING:
    from kg_platform.config import Settings
    from kg_platform.embedding import Embedder
    from kg_platform.graph import GraphClient
    from kg_platform.retrieval.base import RetrievalContext

__all__ = ["PlatformParts"]


class PlatformParts:
    """Settings, the lazily connected graph and embedder, and the corpus checks every verb uses.

    Args:
        settings: the platform settings (default: :func:`kg_platform.config.get_settings`).
        graph: an open :class:`~kg_platform.graph.GraphClient` to use instead of connecting.
        embedder: an embedder to share (loading the model takes seconds).
    """

    def __init__(
        self,
        settings: "Settings | None" = None,
        *,
        graph: "GraphClient | None" = None,
        embedder: "Embedder | None" = None,
    ) -> None:
        if settings is None:
            from kg_platform.config import get_settings

            settings = get_settings()
        self.settings = settings
        self._graph = graph
        self._own_graph = graph is None
        self._embedder = embedder
        #: corpora whose dead runs were already closed by this object (once per corpus is enough)
        self._reaped: set[str | None] = set()

    # ------------------------------------------------------------------ parts
    @property
    def graph(self) -> "GraphClient":
        """The Neo4j client (connects on first use; the one place a client is built)."""
        if self._graph is None:
            from kg_platform.graph import GraphClient

            self._graph = GraphClient.from_settings(self.settings)
        return self._graph

    @property
    def embedder(self) -> "Embedder":
        """The configured embedder (loaded on first use)."""
        if self._embedder is None:
            from kg_platform.embedding import get_embedder

            self._embedder = get_embedder(self.settings.embedding)
        return self._embedder

    def corpus_name(self, corpus: str | None) -> str:
        """``corpus``, or the configured default, checked (names become Cypher parameters)."""
        from kg_platform.corpus_name import check_corpus

        name = check_corpus(self.settings.corpus if corpus is None else corpus)
        assert name is not None  # not optional: check_corpus raised on None
        return name

    def require_corpus(self, corpus: str) -> str:
        """``corpus`` if the graph holds it (a ``Corpus`` node or a source naming it); else
        :class:`~kg_platform.errors.CorpusNotFound`, with the hint to list the corpora.

        Why every read checks: a misspelt corpus used to answer "nothing found", which reads as
        a bad ranking. One indexed read (``cypher/corpus/exists``) per call, not cached: another
        process may create or drop the corpus at any time.
        """
        from kg_platform.corpus_name import corpus_not_found

        if not self.graph.read("corpus/exists", corpus=corpus)[0]["found"]:
            raise corpus_not_found(corpus)
        return corpus

    def open_corpus(self, corpus: str | None) -> str:
        """:meth:`corpus_name`, and the corpus' runs whose process died marked ``interrupted``.

        Why here: a run killed with ``kill -9`` cannot record its end; every command that opens
        the corpus closes such records, so none says ``running`` after its process is gone.
        """
        name = self.corpus_name(corpus)
        self._close_dead_runs(name)
        return name

    def _close_dead_runs(self, corpus: str | None) -> None:
        if corpus in self._reaped:
            return
        from kg_platform.errors import KGPError
        from kg_platform.ingest.runs import close_dead_runs

        try:
            close_dead_runs(self.graph, corpus)
        except KGPError as exc:  # the command itself will report an unreachable Neo4j
            _log.debug("could not check for interrupted runs: %s", exc)
            return
        self._reaped.add(corpus)

    def corpora(self, names: Sequence[str] | None = None) -> list[CorpusInfo]:
        """Every corpus in the graph (or those of ``names`` that exist), sorted by name, with its
        counts of sources, sections, chunks (all levels) and pieces. A corpus is a ``Corpus``
        node or a corpus name on a source. Runs of this host whose process is gone are marked
        ``interrupted`` first.

        Each count is an index seek on the label's ``corpus`` property, so listing costs the
        size of the corpora listed, not of the whole graph.
        """
        self._close_dead_runs(None)
        if names is None:
            names = [r["name"] for r in self.graph.read("corpus/names")]
        if not names:
            return []
        return [
            CorpusInfo(
                name=r["name"],
                sources=int(r["sources"]),
                sections=int(r["sections"]),
                chunks=int(r["chunks"]),
                pieces=int(r["pieces"]),
            )
            for r in self.graph.read("corpus/counts", names=list(names))
        ]

    def retrieval_context(
        self,
        corpus: str | None = None,
        scope: Sequence[str] | None = None,
        *,
        require: bool = False,
    ) -> "RetrievalContext":
        """What a strategy needs: graph, embedder, settings, corpus and resolved document scope.

        ``require=True`` raises :class:`~kg_platform.errors.CorpusNotFound` for a corpus the
        graph does not hold (:meth:`require_corpus`), after the embedder has loaded (a fresh
        install, which holds no corpus either, is told to run ``kgp setup`` first) and before
        the scope is resolved in it."""
        from kg_platform.retrieval.pipeline import open_context

        embedder = self.embedder
        if corpus is not None:
            self.open_corpus(corpus)
            if require:
                self.require_corpus(corpus)
        return open_context(self.graph, embedder, self.settings, corpus, scope)

    def close(self) -> None:
        """Close the graph connection if this object opened it."""
        if self._graph is not None and self._own_graph:
            self._graph.close()
            self._graph = None
