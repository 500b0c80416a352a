"""One ingestion run: the runner that drives the steps of :mod:`kg_platform.ingest.steps`.

Every feeder (:func:`kg_platform.ingest.ingest_paths` for files, and the lab's QA-paragraph
ingestion) feeds candidates into an :class:`IngestRunner`; everything after "here is a source
with this uri and hash" is shared: plan (:mod:`~kg_platform.ingest.steps.plan`), embed and write
in grouped transactions (:mod:`~kg_platform.ingest.executor`), then the piece graph, the
references and the NLP layer, and the run record.

Failure model: a bad input raises a :class:`~kg_platform.errors.KGPError` (usually a
``ParseError``) while it is read or planned; it is recorded with its hint and the batch goes on.
Any other exception from one input is recorded too (as an internal error), so one bug in a parser
cannot stop a batch. Neo4j failing (``GraphError``) or an interrupt ends the run as ``failed``;
what was committed before stays and the next run resumes, skipping committed sources by hash.

Stages overlap (``ingest.pipeline_batches``, default 2), see :mod:`kg_platform.ingest.executor`.

One writer per corpus: a run holds the Neo4j lock ``ingest:<corpus>`` (a leased
:class:`~kg_platform.graph.lock.JobLock`) from before it reads the corpus's source states until
its writes and prune are done. A second run of the same folder waits for it, then finds every
source unchanged and skips it, instead of parsing, embedding and writing everything again. The
piece-graph sync runs after the lock is released (it is safe under concurrent writers, see
``ingest/similar.py``). A holder killed on this host is taken over at once; one on another host
after its lease (``jobs.lease_s``).
"""

from __future__ import annotations

import json
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable
from typing import Any

from kg_platform.config import Settings
from kg_platform.corpus_name import check_corpus
from kg_platform.embedding.base import Embedder
from kg_platform.errors import IngestionError, KGPError
from kg_platform.graph.client import GraphClient
from kg_platform.ingest.executor import Batch, BatchExecutor
from kg_platform.ingest.ids import source_id
from kg_platform.ingest.report import FileError, FileWarning, IngestReport, file_error
from kg_platform.ingest.rows import SourcePlan
from kg_platform.ingest.runs import RunCancelled, close_dead_runs
from kg_platform.ingest.steps.distill import ENTITIES_SKIPPED_FOR_DOCUMENTS, NlpLayer
from kg_platform.ingest.steps.embed import embed_batch
from kg_platform.ingest.steps.parse import SourceInput
from kg_platform.ingest.steps.piece_graph import stored_edge_count, sync_corpus_piece_graph
from kg_platform.ingest.steps.plan import embedder_pipeline, plan_with_settings
from kg_platform.ingest.steps.references import link_references
from kg_platform.ingest.steps.write import prune_sources, write_batch
from kg_platform.segmenting.chunker import Chunker, get_chunker

log = logging.getLogger(__name__)

Progress = Callable[[dict[str, Any]], None]

__all__ = [
    "CANCEL_POLL_S",
    "ENTITIES_SKIPPED_FOR_DOCUMENTS",
    "IngestRunner",
    "IngestSession",
    "Progress",
    "ingest_lock_name",
]


#: how often (seconds) a run reads whether it was asked to stop (one small read per poll)
CANCEL_POLL_S = 0.5


def ingest_lock_name(corpus: str) -> str:
    return f"ingest:{corpus}"


class IngestRunner:
    """One run of the write path over one corpus: the run record, the lock, the executor."""

    def __init__(
        self,
        graph: GraphClient,
        settings: Settings,
        corpus: str,
        *,
        embedder: Embedder | None = None,
        progress: Progress | None = None,
        paths: list[str] | None = None,
        ensure_schema: bool = True,
        parser_version: str | None = None,
    ) -> None:
        if embedder is None:
            from kg_platform.embedding import get_embedder

            embedder = get_embedder(settings.embedding)
        check_corpus(corpus)
        self.graph, self.settings, self.corpus, self.embedder = graph, settings, corpus, embedder
        self._progress = progress
        self.pipeline = embedder_pipeline(settings, embedder, parser_version=parser_version)
        self.run_id = f"run-{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"
        self.report = IngestReport(run_id=self.run_id, corpus=corpus)
        self.counts = {"sources": 0, "sections": 0, "chunks": 0, "pieces": 0}
        self.timings = {
            "parse": 0.0,
            "plan": 0.0,
            "embed": 0.0,
            "write": 0.0,
            "piece_graph": 0.0,
            "prune": 0.0,
            "entities": 0.0,
        }
        self.executor = BatchExecutor(
            depth=settings.tuning.ingest.pipeline_batches,
            transaction_rows=settings.ingest.transaction_rows,
            embed=lambda plans: embed_batch(plans, self.embedder, self.settings),
            write=lambda plans: write_batch(self.graph, plans, self.run_id),
            on_written=self._written,
            timings=self.timings,
        )
        self._chunker: Chunker | None = None
        self.nlp = NlpLayer(graph, settings, corpus, embedder)
        self._started = time.perf_counter()
        self._cancel_polled = float("-inf")  # when check_cancelled last read the run's node
        if ensure_schema:
            from kg_platform.graph.schema import apply_migrations

            apply_migrations(graph, embedder.dimension, embedder.model_name)
        self._lock = self._wait_for_corpus(graph, settings, corpus)
        try:
            graph.write(
                "ingest/run_start",
                id=self.run_id,
                corpus=corpus,
                paths=paths or [],
                host=socket.gethostname(),
                pid=os.getpid(),
            )
            self.report.interrupted = close_dead_runs(graph, corpus, self.run_id)
            # read only now, under the lock: what a run before us wrote is skipped by hash
            self.existing: dict[str, dict[str, Any]] = {
                r["id"]: dict(r) for r in graph.read("ingest/source_states", corpus=corpus)
            }
        except BaseException:
            self._unlock()
            raise

    def _record_run(self, rep: IngestReport, errors: list[dict[str, Any]]) -> None:
        """Write the run's end; skipped when Neo4j is known to be gone (no second retry wait)."""
        if getattr(self.graph, "unavailable", False):
            log.warning(
                "Neo4j is unavailable: run %s is not recorded (the next run records it "
                "as interrupted and resumes it)",
                self.run_id,
            )
            return
        try:
            self.graph.write(
                "ingest/run_finish",
                id=self.run_id,
                status=rep.status,
                counts=json.dumps(
                    rep.counts
                    | {
                        "added": len(rep.added),
                        "replaced": len(rep.replaced),
                        "skipped": len(rep.skipped),
                        "pruned": len(rep.pruned),
                        "failed": len(rep.errors),
                    }
                ),
                errors=json.dumps(errors),
                warnings=json.dumps([w.model_dump() for w in rep.warnings]),
                tokens=rep.tokens,
                duration_s=rep.duration_s,
            )
        except KGPError:
            log.warning("could not record run %s in Neo4j", self.run_id)

    # ------------------------------------------------------------------ corpus lock
    def _wait_for_corpus(self, graph: GraphClient, settings: Settings, corpus: str) -> Any:
        from kg_platform.graph.lock import JobLock

        lock = JobLock(graph, ingest_lock_name(corpus), lease_s=settings.tuning.jobs.lease_s)
        wait_s = settings.ingest.lock_wait_s

        def waiting(holder: str | None) -> None:
            log.warning(
                "corpus %r is being written by another run (%s); waiting for it (up to %.0f s)",
                corpus,
                holder,
                wait_s,
            )
            self.emit(event="waiting", corpus=corpus, holder=holder, run_id=self.run_id)

        if not lock.wait_acquire(wait_s, poll_s=1.0, on_wait=waiting):
            raise IngestionError(
                f"corpus {corpus!r} is still being written by another run ({lock.holder}) "
                f"after {wait_s:.0f} s",
                hint="let that run finish, or raise KGP_INGEST__LOCK_WAIT_S; the holder is in "
                f"(:JobLock {{name: '{ingest_lock_name(corpus)}'}}); a holder on this host "
                "that died is taken over at once",
            )
        return lock

    def _unlock(self) -> None:
        lock, self._lock = getattr(self, "_lock", None), None
        if lock is not None:
            lock.release()

    def check_cancelled(self) -> None:
        """Raise :class:`~kg_platform.ingest.runs.RunCancelled` once the run's node says it was
        asked to stop (``ingest/run_cancel``, from any process); reads it at most every
        :data:`CANCEL_POLL_S`. Called between sources: batches already queued land whole (each
        is one transaction of whole sources), the pending ones are dropped (:meth:`finish`)."""
        now = time.monotonic()
        if now - self._cancel_polled < CANCEL_POLL_S:
            return
        self._cancel_polled = now
        rows = self.graph.read("ingest/run_cancel_requested", id=self.run_id)
        if rows and rows[0]["requested"]:
            raise RunCancelled(f"run {self.run_id} was cancelled on request")

    # ------------------------------------------------------------------ helpers
    @property
    def chunker(self) -> Chunker:
        if self._chunker is None:
            self._chunker = get_chunker(self.settings)
        return self._chunker

    def emit(self, **event: Any) -> None:
        if self._progress is not None:
            self._progress(event)

    def error(self, path: str, exc: BaseException) -> None:
        self.record_error(file_error(path, exc))

    def record_error(self, err: FileError) -> None:
        """Report an input that could not be ingested (here or on a worker); the batch goes on."""
        self.report.errors.append(err)
        self.emit(event="source", uri=err.path, status="error", error=err.model_dump())

    def warn(self, path: str, warnings: list[str]) -> None:
        """Carry a parser's warnings about ``path`` into the report and the run record."""
        for text in warnings:
            self.report.warnings.append(FileWarning(path=path, warning=text))
            self.emit(event="warning", uri=path, warning=text)

    def is_unchanged(self, uri: str, sha256: str) -> bool:
        state = self.existing.get(source_id(self.corpus, uri))
        return bool(state and state["sha256"] == sha256 and state["pipeline"] == self.pipeline)

    def skip(self, uri: str) -> None:
        self.report.skipped.append(uri)
        self.emit(event="source", uri=uri, status="skipped")

    # ------------------------------------------------------------------ the work
    def add(self, inp: SourceInput, display: str | None = None) -> None:
        """Plan one source and queue it; a planning error is recorded, not raised."""
        inp.pipeline = self.pipeline
        started = time.perf_counter()
        try:
            plan = plan_with_settings(inp, self.chunker, self.settings)
        except Exception as exc:  # noqa: BLE001 - one bad input never stops the batch
            self.error(display or inp.uri, exc)
            return
        finally:
            self.timings["plan"] += time.perf_counter() - started
        self._queue(plan)

    def add_planned(self, plan: SourcePlan, texts_embedded: int) -> None:
        """Queue a source planned and embedded elsewhere (a Ray worker): it is written like one
        planned here, in the same grouped transactions, and its vectors are not recomputed."""
        if plan.source.pipeline != self.pipeline:
            raise IngestionError(
                f"{plan.source.uri} was planned with pipeline "
                f"{plan.source.pipeline!r}, this run writes {self.pipeline!r}",
                hint="every worker must run the same kg-platform version and settings as the "
                "process that writes",
            )
        self.report.texts_embedded += texts_embedded
        self._queue(plan)

    def _queue(self, plan: SourcePlan) -> None:
        self.nlp.start_parser(plan, corpus_had_sources=bool(self.existing))
        self.executor.queue(plan, replaced=plan.source.id in self.existing)

    def flush(self) -> None:
        """Hand the pending batch to the stages and wait until every batch is written."""
        self.executor.flush()

    def _written(self, batch: Batch, texts: int) -> None:
        """A batch committed (called in the caller's thread by the executor)."""
        self.report.texts_embedded += texts
        self._record(batch)

    def _record(self, batch: Batch) -> None:
        for plan, replaced in batch:
            uri = plan.source.uri
            (self.report.replaced if replaced else self.report.added).append(uri)
            self.existing[plan.source.id] = {
                "id": plan.source.id,
                "uri": uri,
                "sha256": plan.source.sha256,
                "pipeline": self.pipeline,
            }
            self.counts["sources"] += 1
            self.counts["sections"] += len(plan.sections)
            self.counts["chunks"] += len(plan.chunks)
            self.counts["pieces"] += len(plan.pieces)
            self.report.tokens += plan.tokens
            # plans hold every vector; drop them as soon as they are written (bounded memory)
            self.emit(
                event="source",
                uri=uri,
                status="replaced" if replaced else "added",
                chunks=len(plan.chunks),
                pieces=len(plan.pieces),
            )

    def prune(self, keep: Callable[[str], bool]) -> None:
        """Delete sources of the corpus for which ``keep(uri)`` is false."""
        started = time.perf_counter()
        doomed = prune_sources(self.graph, self.corpus, self.existing, keep)
        for sid, uri in doomed.items():
            self.existing.pop(sid, None)
            self.report.pruned.append(uri)
            self.emit(event="source", uri=uri, status="pruned")
        self.timings["prune"] += time.perf_counter() - started

    def _sync_piece_graph(self) -> None:
        """The piece-graph step: SIMILAR edges for the pieces this run added or removed."""
        self.emit(event="phase", name="piece_graph")
        started = time.perf_counter()
        sync = sync_corpus_piece_graph(self.graph, self.corpus, self.settings)
        self.timings["piece_graph"] += time.perf_counter() - started
        if not sync.skipped:
            self.counts["similar_added"] = sync.added
            self.counts["similar_removed"] = sync.removed
            self.counts["similar_edges"] = sync.edges
            self.counts["piece_graph_pending"] = sync.pending
            self.report.piece_graph_mode = sync.mode

    def _sync_references(self) -> None:
        """REFERENCES edges between the corpus's sources that name each other's titles."""
        self.emit(event="phase", name="references")
        started = time.perf_counter()
        refs = link_references(self.graph, self.corpus, self.settings)
        self.timings["references"] = self.timings.get("references", 0.0) + (
            time.perf_counter() - started
        )
        if not refs.skipped:
            self.counts["references_edges"] = refs.edges
            self.counts["references_added"] = refs.added
            self.counts["references_removed"] = refs.removed

    def _distill_nlp(self) -> None:
        """The NLP step (:class:`~kg_platform.ingest.steps.distill.NlpLayer`), folded into the
        report."""
        out = self.nlp.run(self.emit)
        if out.entities is not None:
            self.report.entities = out.entities
        self.counts.update(out.counts)
        for name, seconds in out.timings.items():
            self.timings[name] = self.timings.get(name, 0.0) + seconds

    def finish(self, fatal: BaseException | None = None) -> IngestReport:
        """Sync the piece graph (unless the run failed), record the run, return the report."""
        rep = self.report
        try:
            if fatal is None:
                self.flush()
                self.executor.shutdown()
                self._unlock()  # writes done: the next run of this corpus may start
                self._sync_piece_graph()
                self._sync_references()
                self._distill_nlp()
        except BaseException as exc:  # noqa: BLE001 - recorded below, then re-raised by caller
            fatal = exc
        self.nlp.close()
        if fatal is not None:
            # no worker thread may still write once another run can take the corpus's lock
            try:
                self.executor.drain_after_failure()
            finally:
                self._unlock()
            rep.status = "cancelled" if isinstance(fatal, RunCancelled) else "failed"
            rep.fatal = f"{type(fatal).__name__}: {fatal}"
        else:
            rep.status = "completed_with_errors" if rep.errors else "completed"
            if "similar_edges" not in self.counts:
                self.counts["similar_edges"] = stored_edge_count(self.graph, self.corpus)
        rep.counts = dict(self.counts)
        rep.timings = {k: round(v, 3) for k, v in self.timings.items()}
        rep.duration_s = round(time.perf_counter() - self._started, 3)
        errors = [e.model_dump() for e in rep.errors]
        if rep.fatal:
            errors.append({"path": "", "error": "fatal", "reason": rep.fatal, "hint": ""})
        self._record_run(rep, errors)
        self.emit(event="done", report=rep.model_dump())
        if fatal is not None and not isinstance(fatal, Exception):
            raise fatal  # KeyboardInterrupt / SystemExit: recorded, then honoured
        return rep


#: the name the feeders used before the runner (kept for callers)
IngestSession = IngestRunner
