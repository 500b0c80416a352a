"""``KnowledgePlatform``: the one object a Python user needs.

It owns a graph connection and an embedder (both created lazily, so constructing it is free) and
delegates every verb to the feature module that implements it: ``ingest`` to
:mod:`kg_platform.ingest`, ``retrieve`` to the strategy registry of :mod:`kg_platform.retrieval`,
``ask`` to :mod:`kg_platform.reasoning`, ``train_router`` to :mod:`kg_platform.retrieval.router`,
``evaluate`` to :mod:`kg_platform.evaluation`, ``run_job`` to :mod:`kg_platform.jobs`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kg_platform.config import Settings
    from kg_platform.embedding import Embedder
    from kg_platform.evaluation.harness import EvalResult
    from kg_platform.graph import GraphClient
    from kg_platform.ingest import IngestReport
    from kg_platform.jobs import JobRunResult
    from kg_platform.reasoning import Answer
    from kg_platform.retrieval.base import RetrievedItem


class KnowledgePlatform:
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

    def __init__(self, settings: "Settings | None" = None, *, graph: "GraphClient | None" = None,
                 embedder: "Embedder | None" = None) -> None:
        if settings is None:
            from kg_platform.config import get_settings

            settings = get_settings()
        self.settings = settings
        self._graph = graph
        self._own_graph = graph is None
        self._embedder = embedder

    @classmethod
    def from_env(cls, **overrides: Any) -> "KnowledgePlatform":
        """Settings from the environment and ``kgp.toml``, with keyword overrides.

        >>> kp = KnowledgePlatform.from_env(corpus="docs")   # nothing connects yet
        >>> kp.settings.corpus
        'docs'
        """
        from kg_platform.config import Settings

        return cls(Settings(**overrides))

    # ------------------------------------------------------------------ parts
    @property
    def graph(self) -> "GraphClient":
        """The Neo4j client (connects on first use)."""
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

    def close(self) -> None:
        """Close the graph connection if this object opened it."""
        if self._graph is not None and self._own_graph:
            self._graph.close()
            self._graph = None

    def __enter__(self) -> "KnowledgePlatform":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ write
    def init_schema(self) -> int:
        """Apply the schema migrations (idempotent); return the schema version."""
        from kg_platform.graph.schema import apply_migrations

        return apply_migrations(self.graph, self.embedder.dimension, self.embedder.model_name)

    def ingest(self, paths: Sequence[str | Path], corpus: str | None = None, *,
               include: Sequence[str] | None = None, exclude: Sequence[str] | None = None,
               prune: bool = False, progress: Any = None) -> "IngestReport":
        """Ingest files and folders into ``corpus`` (default: ``settings.corpus``).

        Unchanged files are skipped, changed ones replaced; bad files are listed in
        ``report.errors`` and never stop the batch. The run is recorded as ``(:IngestRun)``.
        """
        from kg_platform.ingest import ingest_paths

        return ingest_paths(self.graph, self.settings, list(paths),
                            self.settings.corpus if corpus is None else corpus,
                            include=include, exclude=exclude, prune=prune, progress=progress,
                            embedder=self.embedder)

    def distill(self, corpus: str | None = None, steps: Sequence[str] | None = None) -> Any:
        """Run the distillation steps (atomic questions, entities, tags) over a corpus.

        Without an LLM the steps are skipped with a note in the returned report.
        """
        from kg_platform.corpus_name import check_corpus
        from kg_platform.distilling.runner import distill_corpus
        from kg_platform.llm import get_llm

        check_corpus(self.settings.corpus if corpus is None else corpus)
        llm = get_llm(self.settings)
        try:
            return distill_corpus(self.graph, self.embedder, llm, self.settings,
                                  corpus=self.settings.corpus if corpus is None else corpus,
                                  steps=list(steps) if steps is not None else None)
        finally:
            if llm is not None:
                llm.close()

    def run_job(self, name: str, directory: str | Path | None = None) -> "JobRunResult":
        """Run an ingestion job spec by name (``ingestion/<name>.toml``) under its Neo4j lock."""
        from kg_platform.jobs import find_spec, run_job

        spec = find_spec(Path(directory or self.settings.jobs.dir), name)
        return run_job(spec, self.graph, self.settings, embedder=self.embedder)

    # ------------------------------------------------------------------- read
    def strategies(self) -> dict[str, str]:
        """Every registered retrieval strategy with its one-line description.

        >>> "hybrid" in KnowledgePlatform.from_env().strategies()
        True
        """
        from kg_platform.retrieval.base import list_strategies

        return list_strategies()

    def retrieve(self, query: str, *, strategy: str = "hybrid", k: int = 5,
                 corpus: str | None = None, record: bool = False,
                 scope: Sequence[str] | None = None) -> list["RetrievedItem"]:
        """The top ``k`` items for ``query`` from one strategy, with the evidence of each
        (score breakdown, path, the named Cypher that found it) and its source and section.

        ``record=True`` stores the result as an answer (``(:Trajectory {kind: 'retrieve'})``
        with ``CHOSE`` edges carrying rank, score and breakdown) whose id is then in
        :attr:`last_answer_id`, so the Browser guide's "why was this chunk retrieved" query can
        show it. Items also get a ``source_uri`` attribute when the graph knows it.

        ``scope`` restricts retrieval to some documents ("ask this document"): source ids,
        titles, paths or file names, several allowed; the restriction runs inside the Cypher.
        """
        items, self.last_answer_id = self.retrieve_recorded(
            query, strategy=strategy, k=k, corpus=corpus, record=record, scope=scope)
        return items

    last_answer_id: str | None = None

    def retrieve_recorded(self, query: str, *, strategy: str = "hybrid", k: int = 5,
                          corpus: str | None = None, record: bool = True,
                          scope: Sequence[str] | None = None,
                          ) -> tuple[list["RetrievedItem"], str | None]:
        """:meth:`retrieve` returning ``(items, answer_id)`` (thread-safe: no shared state)."""
        from kg_platform.retrieval.base import RetrievalContext, get_strategy
        from kg_platform.retrieval.scope import resolve_scope

        ctx = RetrievalContext(self.graph, self.embedder, self.settings, corpus,
                               sources=resolve_scope(self.graph, scope, corpus))
        items = get_strategy(strategy, ctx).retrieve(query, k)
        _enrich(self.graph, items)
        answer_id = _record(self.graph, query, corpus, strategy, items) if record else None
        return items, answer_id

    def ask(self, question: str, *, corpus: str | None = None, strategy: str | None = None,
            mode: str = "auto", feedback: bool = False,
            scope: Sequence[str] | None = None) -> "Answer":
        """Answer with citations (LLM when configured; otherwise the best evidence sentences).

        ``mode``: ``auto`` (classify, then factual or decompose), ``factual``, ``decompose``.
        ``scope``: answer from these documents only (as in :meth:`retrieve`).
        """
        from kg_platform.reasoning import Reasoner
        from kg_platform.llm import get_llm

        llm = get_llm(self.settings)
        try:
            from kg_platform.retrieval.scope import resolve_scope

            reasoner = Reasoner(graph=self.graph, embedder=self.embedder, settings=self.settings,
                                llm=llm, sources=resolve_scope(self.graph, scope, corpus))
            return reasoner.ask(question, corpus=corpus, strategy=strategy, mode=mode,
                                feedback=feedback)
        finally:
            if llm is not None:
                llm.close()

    def train_router(self, dataset: str | Path, corpus: str, *, kind: str = "mog",
                     limit: int | None = None) -> dict[str, Any]:
        """Train and register the MoG (or MoGG) router of ``corpus`` from a QA jsonl file."""
        from kg_platform.retrieval.base import RetrievalContext
        from kg_platform.retrieval.router import train_router

        ctx = RetrievalContext(self.graph, self.embedder, self.settings, corpus)
        return train_router(ctx, Path(dataset), kind=kind, limit=limit, echo=lambda *_: None)

    def evaluate(self, dataset: str | Path, strategies: Sequence[str], *, k: int = 5,
                 limit: int | None = None, corpus: str | None = None,
                 **options: Any) -> "EvalResult":
        """Score strategies on a QA jsonl file (supporting-fact recall@k and friends)."""
        from kg_platform.evaluation.harness import EvalConfig, run_evaluation

        cfg = EvalConfig(dataset=Path(dataset), strategies=list(strategies), k=k, limit=limit,
                         corpus=corpus, **options)
        return run_evaluation(cfg, self.graph, self.embedder, self.settings)


def _enrich(graph: "GraphClient", items: list["RetrievedItem"]) -> None:
    """Fill source title/uri, section path and page where a strategy left them out."""
    if not items:
        return
    rows = {r["id"]: r for r in graph.read("sdk/item_context", ids=[it.id for it in items])}
    for it in items:
        row = rows.get(it.id)
        if row is None:
            continue
        it.source_id = it.source_id or row["source_id"]
        it.source_title = it.source_title or row["source_title"] or row["source_uri"]
        it.section_title = it.section_title or row["section"]
        it.page = it.page if it.page is not None else row["page"]
        if it.level is None and row["level"] is not None:
            it.level = int(row["level"])
        # Extra attributes (RetrievedItem is a plain dataclass): the LangChain adapter reads them.
        setattr(it, "source_uri", row["source_uri"])
        setattr(it, "chunk_id", row["chunk_id"])


def _record(graph: "GraphClient", query: str, corpus: str | None, strategy: str,
            items: list["RetrievedItem"]) -> str:
    from kg_platform.reasoning.trajectory import new_trajectory_id

    tid = new_trajectory_id(query)
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())   # as reasoning.trajectory
    graph.write("sdk/record_retrieval", id=tid, question=query, corpus=corpus, created=created,
                strategy=strategy, items=[{
                    "id": it.id, "rank": i + 1, "score": float(it.score),
                    "breakdown": json.dumps(it.breakdown), "path": list(it.path),
                    "query": it.query} for i, it in enumerate(items)])
    return tid
