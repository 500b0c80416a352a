"""``KnowledgePlatform``: the one front door of kg-platform.

It is the only place that wires settings, the graph connection, the embedder, the LLM and the
retrieval strategies together; ``kgp`` commands parse their arguments, call one of its methods and
print the typed result, and the jobs runner and the LangChain retriever call the same methods.
A feature therefore changes in its feature module (``ingest``, ``retrieval``, ``reasoning``,
``distilling``, ``jobs``) and is reachable from every entry point at once.

The graph and the embedder are created lazily (constructing the object is free and imports
neither the Neo4j driver nor ONNX Runtime), and the object holds no per-call state, so one
instance may serve many threads.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from kg_platform.sdk.results import CorpusInfo, Retrieval, SourceOutline

_log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from kg_platform.config import Settings
    from kg_platform.distilling import DistillReport
    from kg_platform.embedding import Embedder
    from kg_platform.graph import GraphClient
    from kg_platform.ingest import IngestReport
    from kg_platform.ingest.roots import PathGuard
    from kg_platform.ingest.runs import RunRecord
    from kg_platform.ingest.similar import PieceGraphSync
    from kg_platform.ingest.references import ReferencesSync
    from kg_platform.jobs import JobRunResult, JobSpec
    from kg_platform.jobs.runner import Trigger
    from kg_platform.reasoning import Answer
    from kg_platform.retrieval.base import RetrievalContext, RetrievedItem

__all__ = ["CorpusInfo", "KnowledgePlatform", "Retrieval"]


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

    def runs(self, corpus: str | None = None, *, limit: int = 50) -> list["RunRecord"]:
        """The newest ingestion runs, ad-hoc and job, of ``corpus`` (None: every corpus), each
        with its status, counts, errors and parser warnings. Runs of this host whose process is
        gone are marked ``interrupted`` first."""
        from kg_platform.ingest.runs import list_runs

        name = None if corpus is None else self.corpus_name(corpus)
        self._close_dead_runs(name)
        return list_runs(self.graph, name, limit)

    def run(self, run_id: str) -> "RunRecord":
        """One ingestion run by id (raises :class:`~kg_platform.ingest.runs.RunNotFound`)."""
        from kg_platform.ingest.runs import get_run

        first = get_run(self.graph, run_id)
        if first.status == "running":
            self._close_dead_runs(first.corpus)
            return get_run(self.graph, run_id)
        return first

    def cancel_run(self, run_id: str) -> "RunRecord":
        """Ask the running ingestion ``run_id`` to stop, whichever process runs it (the request
        is recorded on its ``(:IngestRun)`` node; the run reads it between files and ends as
        ``cancelled``, every source written whole or not at all). Returns the record as it is
        now: ``running`` until the run notices (within a second or one file), or the status of
        a run that had already ended, unchanged. Raises
        :class:`~kg_platform.ingest.runs.RunNotFound` for an unknown id."""
        from kg_platform.ingest.runs import request_cancel

        return request_cancel(self.graph, run_id)

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

    def __enter__(self) -> "KnowledgePlatform":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ write
    def init_schema(self) -> int:
        """Apply the schema migrations (idempotent) and give every corpus its own indexes
        (:func:`~kg_platform.graph.corpus_indexes.isolate_existing_corpora`: a backfill for
        corpora written before they had them); return the schema version."""
        from kg_platform.graph import schema
        from kg_platform.graph.corpus_indexes import isolate_existing_corpora

        version = schema.apply_migrations(
            self.graph, self.embedder.dimension, self.embedder.model_name
        )
        isolate_existing_corpora(self.graph)
        return version

    def drop_vector_indexes(self) -> list[str]:
        """Drop the vector indexes (after changing the embedding model, whose dimension they
        were built for); :meth:`init_schema` then rebuilds them. Returns the dropped names."""
        from kg_platform.graph import schema

        return list(schema.drop_vector_indexes(self.graph))

    def ingest(
        self,
        paths: Sequence[str | Path],
        corpus: str | None = None,
        *,
        include: Sequence[str] | None = None,
        exclude: Sequence[str] | None = None,
        prune: bool = False,
        progress: Any = None,
        distill: str | Sequence[str] | None = None,
        echo: Callable[[str], None] | None = None,
        engine: Literal["local", "ray"] | None = None,
        ray_address: str | None = None,
        ray_workers: int | None = None,
        guard: "PathGuard | None" = None,
    ) -> "IngestReport":
        """Ingest files and folders into ``corpus`` (default: ``settings.corpus``).

        Unchanged files are skipped, changed ones replaced; bad files are listed in
        ``report.errors`` and never stop the batch. The run is recorded as ``(:IngestRun)``.
        ``distill`` (steps such as ``"atomic,entities"``) then distils the corpus's pending
        chunks with the configured LLM and adds that to the run's record.
        ``engine="ray"`` parses, plans and embeds on Ray workers (``ray_address``: the cluster,
        unset starts Ray here; ``ray_workers``: how many, default one per CPU); the writes, and
        so the graph, are those of the default in-process engine. Unset arguments keep
        ``settings.ingest``. ``guard`` (:class:`~kg_platform.ingest.roots.PathGuard`, what a
        server passes) limits the paths and every file of a folder walk to its roots; without
        one, whatever this process can read is read. ``paths``, ``corpus``, ``include`` and
        ``exclude`` are checked by :class:`~kg_platform.requests.IngestRequest` first (as at
        every door; :class:`~kg_platform.errors.InvalidRequest` names what is out of bounds).
        """
        from kg_platform.config import with_values
        from kg_platform.ingest import ingest_paths
        from kg_platform.requests import IngestRequest

        req = IngestRequest.of(
            paths=[str(p) for p in paths],
            corpus=corpus,
            include=list(include) if include is not None else None,
            exclude=list(exclude) if exclude is not None else None,
        )
        include, exclude = req.include, req.exclude
        name = self.open_corpus(req.corpus)
        ingest = with_values(
            self.settings.ingest, engine=engine, ray_address=ray_address, ray_workers=ray_workers
        )
        settings = self.settings.model_copy(update={"ingest": ingest})
        report = ingest_paths(
            self.graph,
            settings,
            [Path(p) for p in paths],
            name,
            include=list(include) if include else None,
            exclude=list(exclude) if exclude else None,
            prune=prune,
            progress=progress,
            embedder=self._embedder,
            guard=guard,
        )
        if distill:
            from kg_platform.distilling import record_distillation
            from kg_platform.errors import JobLocked

            try:
                done = self.distill(name, distill, echo=echo)
            except JobLocked as exc:  # the ingest landed; the running distillation goes on
                (echo or _log.warning)(
                    f"distillation skipped: {exc.args[0]}; distil corpus "
                    f"{name!r} again after it ends"
                )
                return report
            if not done.skipped:
                record_distillation(self.graph, report.run_id, done)
        return report

    def drop_corpus(self, name: str) -> int:
        """Delete the corpus ``name`` entirely; return how many sources were deleted.

        Goes with it: its sources and everything below them (sections, chunks, pieces, distilled
        facts), its run records and piece-graph statistics, its ``Corpus`` node, and its trained
        routers (``(:Router)``, so a corpus ingested again under that name starts without a
        router trained on the old data; the artifact folders under ``data_dir/routers`` stay).
        Recorded retrievals and answers (``(:Trajectory)``) are kept. The files ``kgp serve``
        kept of the corpus's uploads (``data_dir/serve/uploads/<corpus key>``) are deleted. Raises
        :class:`~kg_platform.errors.CorpusNotFound` when the graph has no such corpus, and
        :class:`~kg_platform.errors.JobLocked` while an ingestion or distillation of it runs.
        """
        from kg_platform.corpus_name import corpus_not_found
        from kg_platform.distilling.runner import distill_lock_name
        from kg_platform.errors import JobLocked
        from kg_platform.graph.lock import JobLock
        from kg_platform.ingest.session import ingest_lock_name
        from kg_platform.ingest.writer import drop_corpus

        corpus = self.corpus_name(name)
        if not self.corpora([corpus]):
            raise corpus_not_found(corpus)
        graph = self.graph
        locks: list[JobLock] = []
        try:
            for lock_name in (ingest_lock_name(corpus), distill_lock_name(corpus)):
                lock = JobLock(graph, lock_name, lease_s=self.settings.tuning.jobs.lease_s)
                if not lock.acquire():
                    raise JobLocked(
                        f"corpus {corpus!r} is being written (lock {lock_name!r} held by "
                        f"{lock.holder}); it was not dropped",
                        hint="drop it after that run ends; `kgp jobs status` shows job locks, "
                        "and a crashed holder's lock expires after KGP_JOBS__LEASE_S",
                    )
                locks.append(lock)
            dropped = drop_corpus(graph, corpus)
            from kg_platform.upload_folders import remove_upload_folder

            remove_upload_folder(self.settings, corpus)
            return dropped
        finally:
            for lock in reversed(locks):
                lock.release()

    def rebuild_piece_graph(self, corpus: str | None = None) -> "PieceGraphSync":
        """Rebuild the corpus' whole MoGG piece graph with fresh BM25 statistics.

        Ingestion updates the graph incrementally with statistics frozen at the last full build
        and rebuilds on its own once the corpus has grown or shrunk by
        ``piece_graph.rebuild_factor``; this is the same rebuild on demand (after changing
        ``k_graph``/``t_graph`` it happens by itself). Safe while other ingests run.
        """
        from kg_platform.ingest.similar import sync_piece_graph

        pg = self.settings.tuning.piece_graph
        return sync_piece_graph(
            self.graph,
            self.open_corpus(corpus),
            pg.k_graph,
            pg.t_graph,
            force=True,
            candidates=pg.candidates,
            rebuild_factor=pg.rebuild_factor,
        )

    def rebuild_references(self, corpus: str | None = None) -> "ReferencesSync":
        """Rebuild the corpus' ``(:Source)-[:REFERENCES]->(:Source)`` edges in full (every text
        against every title). Ingestion keeps them up to date by itself; this builds them for a
        corpus ingested before they existed, and gives the same edges as the increments."""
        from kg_platform.ingest.references import sync_references

        return sync_references(
            self.graph,
            self.open_corpus(corpus),
            force=True,
            lease_s=self.settings.tuning.jobs.lease_s,
        )

    def check_piece_graph(self, corpus: str | None = None) -> dict[str, Any]:
        """Compare the stored piece graph with a full build over the current pieces.

        Two references: the frozen statistics the incremental updates promise to equal
        (``missing``/``extra``/``max_score_diff``), and fresh statistics (``fresh_jaccard``: how far
        the graph has drifted from what a rebuild would give). Costs a full build in Python.
        """
        from kg_platform.ingest.similar import desired_edges, frozen_stats

        name = self.open_corpus(corpus)
        pg = self.settings.tuning.piece_graph
        rows = self.graph.read("ingest/piece_texts", corpus=name)
        stored = {
            (r["a"], r["b"]): float(r["score"])
            for r in self.graph.read("ingest/similar_edges", corpus=name)
        }
        stats = frozen_stats(self.graph, name)
        fresh = desired_edges(rows, pg.k_graph, pg.t_graph)
        frozen = desired_edges(rows, pg.k_graph, pg.t_graph, stats) if stats else fresh
        common = set(stored) & set(frozen)
        union = set(fresh) | set(stored)
        return {
            "corpus": name,
            "pieces": len(rows),
            "edges": len(stored),
            "frozen_statistics": stats is not None,
            "frozen_pieces": stats.n if stats else None,
            "expected_edges": len(frozen),
            "missing": len(set(frozen) - set(stored)),
            "extra": len(set(stored) - set(frozen)),
            "max_score_diff": max((abs(stored[e] - frozen[e]) for e in common), default=0.0),
            "fresh_jaccard": round(len(set(fresh) & set(stored)) / len(union), 4) if union else 1.0,
        }

    def distill(
        self,
        corpus: str | None = None,
        steps: str | Sequence[str] | None = None,
        *,
        echo: Callable[[str], None] | None = None,
        extractor: str | None = None,
    ) -> "DistillReport":
        """Run the distillation steps (atomic questions, entities, tags) over a corpus.

        ``extractor`` (``auto``/``nlp``/``llm``, default the setting) chooses who extracts
        entities: ``nlp`` needs no LLM. Steps that need an LLM are skipped without one, with a
        note in the returned report.
        """
        from kg_platform.distilling.configured import distill_with_configured_llm

        name = self.open_corpus(corpus)  # the name is checked before connecting
        return distill_with_configured_llm(
            self.graph,
            self.embedder,
            self.settings,
            corpus=name,
            steps=steps,
            echo=echo,
            extractor=extractor,
        )

    def find_job(self, name: str, directory: str | Path | None = None) -> "JobSpec":
        """The job spec ``name`` (or a spec file's path) in ``directory`` (default: settings)."""
        from kg_platform.jobs import find_spec

        return find_spec(Path(directory or self.settings.jobs.dir), name)

    def run_job(
        self,
        job: "str | JobSpec",
        directory: str | Path | None = None,
        *,
        trigger: "Trigger" = "manual",
    ) -> "JobRunResult":
        """Run an ingestion job (a spec, or its name in ``ingestion/``) under its Neo4j lock.

        Raises :class:`~kg_platform.errors.JobLocked` when it runs elsewhere; any other failure
        is recorded as a failed run and returned. The embedder is passed only once loaded, so
        an embedder that cannot load is recorded as the run's failure, not raised here.
        """
        from kg_platform.jobs import run_job

        spec = self.find_job(job, directory) if isinstance(job, str) else job
        return run_job(spec, self.graph, self.settings, trigger=trigger, embedder=self._embedder)

    # ------------------------------------------------------------------- read
    def strategies(self) -> dict[str, str]:
        """Every registered retrieval strategy with its one-line description.

        >>> "hybrid" in KnowledgePlatform.from_env().strategies()
        True
        """
        from kg_platform.retrieval.base import list_strategies

        return list_strategies()

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

    def source_outline(
        self, source: str, corpus: str | None = None, *, level: int = 1
    ) -> SourceOutline:
        """One document as stored: its sections in order, each with its chunks of MoG
        ``level`` (1: the finest chunks) in order. ``source`` is named as in a scope (source
        id, title, path or file name) and must match exactly one source of ``corpus`` (or of
        any corpus when ``corpus`` is None)."""
        from kg_platform.errors import RetrievalError
        from kg_platform.requests import SourceRequest
        from kg_platform.retrieval.scope import resolve_scope

        req = SourceRequest.of(source=source, corpus=corpus, level=level)
        source, level = req.source, req.level
        name = None if req.corpus is None else self.require_corpus(req.corpus)
        ids = resolve_scope(self.graph, [source], name) or []
        if len(ids) != 1:
            raise RetrievalError(
                f"{source!r} names {len(ids)} sources, not one",
                hint="name the source by its id: " + ", ".join(ids[:5]),
            )
        rows = self.graph.read("sdk/source_outline", source_id=ids[0], level=level)
        row = rows[0]
        return SourceOutline(
            id=row["id"],
            title=row["title"],
            uri=row["uri"],
            corpus=row["corpus"],
            pages=row["pages"],
            tokens=row["tokens"],
            sections=[dict(sec) for sec in row["sections"] if sec is not None],
        )

    def retrieve(
        self,
        query: str,
        *,
        strategy: str | None = None,
        k: int | None = None,
        corpus: str | None = None,
        record: bool = False,
        scope: Sequence[str] | None = None,
        select: str | None = None,
    ) -> list["RetrievedItem"]:
        """The top items for ``query`` (see :meth:`search`, which also returns the answer id)."""
        return self.search(
            query, strategy=strategy, k=k, corpus=corpus, record=record, scope=scope, select=select
        ).items

    def search(
        self,
        query: str,
        *,
        strategy: str | None = None,
        k: int | None = None,
        corpus: str | None = None,
        record: bool = False,
        scope: Sequence[str] | None = None,
        select: str | None = None,
        max_tokens: int | None = None,
    ) -> Retrieval:
        """Retrieve with one strategy; every item carries its evidence and where it came from.

        Defaults (``strategy``, ``k``, ``select``) come from ``settings.retrieve``. Each item has
        its score breakdown, path, the named Cypher that found it, and its source (id, title,
        uri), section, page and chunk id. ``select="sage"`` asks the strategy for
        ``settings.tuning.sage.n_candidates`` items and keeps SAGE's gradient cut of them (so the number
        returned is the cut's, not ``k``). ``scope`` restricts retrieval to some documents
        (source ids, titles, paths or file names), inside the Cypher. ``record=True`` stores the
        result as ``(:Trajectory {kind: 'retrieve'})`` and returns its id as ``answer_id``, so
        the Browser guide's "why was this chunk retrieved" query can show it. ``max_tokens``
        (a token budget, instead of ``k``) keeps the longest prefix of the ranking within that
        many tokens, the item that crosses it cut to fit, as ``kgp eval --budget-tokens`` does.
        """
        from kg_platform._faults import fault_point
        from kg_platform.requests import SearchRequest
        from kg_platform.retrieval.pipeline import retrieve

        req = SearchRequest.of(
            query=query,
            strategy=strategy,
            k=k,
            corpus=corpus,
            record=record,
            scope=scope,
            select=select,
            max_tokens=max_tokens,
        )
        query, k, corpus, scope = req.query, req.k, req.corpus, req.scope
        select, max_tokens = req.select, req.max_tokens
        defaults = self.settings.retrieve
        strategy = req.strategy or defaults.strategy
        ctx = self.retrieval_context(corpus, scope, require=True)
        fault_point("retrieve")  # fault tests: connected, about to query (inert otherwise)
        result = retrieve(
            ctx,
            query,
            strategy=strategy,
            k=defaults.k if k is None else k,
            select=select or defaults.select,
            max_tokens=max_tokens,
        )
        items, select = result.items, result.select
        if record:  # the reasoning package only for a stored ranking
            from kg_platform.reasoning.trajectory import store_retrieval
        answer_id = (
            store_retrieval(
                self.graph, question=query, corpus=corpus, strategy=strategy, items=items
            )
            if record
            else None
        )
        return Retrieval(
            query=query,
            strategy=strategy,
            select=select,
            items=items,
            answer_id=answer_id,
            ran=result.ran,
            why=result.why,
        )

    def ask(
        self,
        question: str,
        *,
        corpus: str | None = None,
        strategy: str | None = None,
        mode: str = "auto",
        feedback: bool = False,
        scope: Sequence[str] | None = None,
        context_tokens: int | None = None,
    ) -> "Answer":
        """Answer with citations (LLM when configured; otherwise the best evidence sentences).

        ``mode``: ``auto`` (classify, then factual or decompose), ``factual``, ``decompose``.
        ``scope``: answer from these documents only (as in :meth:`search`).
        ``context_tokens``: the LLM reads the default path's chunks within this many tokens
        (what :meth:`search` returns with ``max_tokens``) instead of SAGE's gradient cut
        (default: ``reasoning.context_tokens``, unset = SAGE's cut).
        """
        from kg_platform.llm.session import open_llm
        from kg_platform.reasoning import Reasoner
        from kg_platform.requests import AskRequest

        req = AskRequest.of(
            question=question,
            corpus=corpus,
            strategy=strategy,
            mode=mode,
            feedback=feedback,
            scope=scope,
            context_tokens=context_tokens,
        )
        question, strategy, mode, scope = req.question, req.strategy, req.mode, req.scope
        context_tokens = req.max_tokens
        # ask answers from settings.corpus when none is named (search: every corpus); the
        # scope is resolved inside that corpus by the same context search uses; a corpus
        # named by the caller must exist (the configured default may still be empty)
        named = req.corpus is not None
        corpus = req.corpus if named else self.settings.corpus
        ctx = self.retrieval_context(corpus, scope, require=named)
        with open_llm(self.settings) as llm:
            reasoner = Reasoner(
                graph=self.graph,
                embedder=self.embedder,
                settings=self.settings,
                llm=llm,
                sources=ctx.sources,
                context=ctx,
            )
            return reasoner.ask(
                question,
                corpus=corpus,
                strategy=strategy,
                mode=mode,
                feedback=feedback,
                context_tokens=context_tokens,
            )
