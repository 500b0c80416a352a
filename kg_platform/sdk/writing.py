"""The write verbs of :class:`~kg_platform.sdk.platform.KnowledgePlatform`: schema, ingestion,
dropping a corpus, rebuilding its derived graphs, distillation, jobs and the run records.

Why a module of its own: everything that changes the graph, or reports on a change, is here; each
verb checks its arguments, takes the locks it needs and calls its feature module (``ingest``,
``distilling``, ``jobs``), so a feature changes there and is reachable from every door at once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from kg_platform.sdk.parts import PlatformParts

_log = logging.getLogger("kg_platform.sdk.platform")

if TYPE_CHECKING:
    from kg_platform.distilling import DistillReport
    from kg_platform.ingest import IngestReport
    from kg_platform.ingest.references import ReferencesSync
    from kg_platform.ingest.roots import PathGuard
    from kg_platform.ingest.runs import RunRecord
    from kg_platform.ingest.similar import PieceGraphSync
    from kg_platform.jobs import JobRunResult, JobSpec
    from kg_platform.jobs.runner import Trigger

__all__ = ["WriteVerbs"]


class WriteVerbs(PlatformParts):
    """What writes the graph or reports on what was written (part of ``KnowledgePlatform``)."""

    def init_schema(self) -> int:
        """Apply the schema migrations (idempotent), give every corpus its own indexes
        (:func:`~kg_platform.graph.corpus_indexes.isolate_existing_corpora`: a backfill for
        corpora written before they had them), then drop the shared indexes those replace
        (:func:`~kg_platform.graph.corpus_indexes.retire_shared_indexes`); return the schema
        version."""
        from kg_platform.graph import schema
        from kg_platform.graph.corpus_indexes import (
            isolate_existing_corpora,
            retire_shared_indexes,
        )

        version = schema.apply_migrations(
            self.graph, self.embedder.dimension, self.embedder.model_name
        )
        isolate_existing_corpora(self.graph)
        retire_shared_indexes(self.graph)
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
                        "and a crashed holder's lock expires after KGP_TUNING__JOBS__LEASE_S",
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
