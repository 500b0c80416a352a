"""One ingestion run: skip-by-hash, plan, embed, write in grouped transactions, record the run.

Every feeder (:func:`kg_platform.ingest.ingest_paths` for files, and the lab's QA-paragraph
ingestion) feeds candidates into an :class:`IngestSession`; everything after "here is a source
with this uri and hash" is shared.

Failure model: a bad input raises a :class:`~kg_platform.errors.KGPError` (usually a
``ParseError``) while it is read or planned; it is recorded with its hint and the batch goes on.
Any other exception from one input is recorded too (as an internal error), so one bug in a parser
cannot stop a batch. Neo4j failing (``GraphError``) or an interrupt ends the run as ``failed``;
what was committed before stays and the next run resumes, skipping committed sources by hash.

Stages overlap (``ingest.pipeline_batches``, default 2): while the caller parses and plans batch
N+2, one worker thread embeds batch N+1 (ONNX Runtime releases the GIL) and another writes batch
N to Neo4j (the driver waits on the socket). Each batch is still one write transaction, written in
order, so idempotency, skip-by-hash and crash-resume are those of the serial pipeline: a kill
leaves every batch committed whole or not at all. After the first failure no later batch is
written. The phase timings of ``embed`` and ``write`` are each stage's busy time, so with overlap
they add up to more than the wall time. ``pipeline_batches = 0`` runs the stages one after another.

One writer per corpus: a session holds the Neo4j lock ``ingest:<corpus>`` (a leased
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
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from kg_platform._faults import fault_point
from kg_platform.config import Settings
from kg_platform.corpus_name import check_corpus
from kg_platform.embedding.base import Embedder
from kg_platform.errors import IngestionError, KGPError
from kg_platform.graph.client import GraphClient
from kg_platform.ingest.embed import embed_with_settings
from kg_platform.ingest.ids import source_id
from kg_platform.ingest.plan import (
    SourceInput,
    SourcePlan,
    embedder_pipeline,
    plan_with_settings,
)
from kg_platform.ingest.report import FileError, FileWarning, IngestReport, file_error
from kg_platform.ingest.runs import RunCancelled, close_dead_runs
from kg_platform.ingest.similar import sync_piece_graph
from kg_platform.ingest.writer import delete_sources, write_plans
from kg_platform.segmenting.chunker import Chunker, get_chunker

if TYPE_CHECKING:
    from kg_platform.distilling.nlp_parser import NlpParser

log = logging.getLogger(__name__)

#: the report's word when ``distill.nlp_on_ingest = auto`` leaves the entities out
ENTITIES_SKIPPED_FOR_DOCUMENTS = (
    "entities: not built, the corpus holds long documents, where the default retrieval does not "
    "read them (`kgp distill --extractor nlp` builds them; KGP_DISTILL__NLP_ON_INGEST=true at "
    "every ingestion)"
)

Progress = Callable[[dict[str, Any]], None]

__all__ = ["IngestSession", "Progress", "ingest_lock_name"]


#: how often (seconds) a run reads whether it was asked to stop (one small read per poll)
CANCEL_POLL_S = 0.5


def ingest_lock_name(corpus: str) -> str:
    return f"ingest:{corpus}"


class _Cancelled(Exception):
    """A batch not embedded or written because an earlier batch failed."""


class IngestSession:
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
        self._pending: list[tuple[SourcePlan, bool]] = []
        self._pending_rows = 0
        # batches handed to the embed/write stages, oldest first, with the future of their write
        self._inflight: deque[tuple[list[tuple[SourcePlan, bool]], Future[int]]] = deque()
        self._depth = max(0, int(settings.tuning.ingest.pipeline_batches))
        self._embed_pool: ThreadPoolExecutor | None = None
        self._write_pool: ThreadPoolExecutor | None = None
        self._stop = threading.Event()
        self._chunker: Chunker | None = None
        self._nlp_parser: NlpParser | None = None  # started at the first new source (NLP layer)
        self._nlp_parser_considered = False  # whether the first new source has been looked at
        self._nlp_setting: str | None = None  # "on" | "off" | "auto", read once (_nlp_mode)
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
        self._start_nlp_parser(plan)
        replaced = plan.source.id in self.existing
        self._pending.append((plan, replaced))
        self._pending_rows += plan.node_count
        if self._pending_rows >= self.settings.ingest.transaction_rows:
            self._submit()

    def flush(self) -> None:
        """Hand the pending batch to the stages and wait until every batch is written."""
        self._submit()
        while self._inflight:
            self._complete_oldest()

    def _submit(self) -> None:
        """Start embedding + writing the pending batch; keep at most ``pipeline_batches``
        batches in flight (bounded memory: each holds its plans' vectors until written)."""
        if not self._pending:
            return
        batch, self._pending, self._pending_rows = self._pending, [], 0
        plans = [p for p, _ in batch]
        if self._depth == 0:
            done: Future[int] = Future()
            done.set_result(self._embed(plans))
            self._write(plans, done)
            self._inflight.append((batch, done))
            self._complete_oldest()
            return
        if self._embed_pool is None or self._write_pool is None:
            self._embed_pool = ThreadPoolExecutor(1, thread_name_prefix="kgp-ingest-embed")
            self._write_pool = ThreadPoolExecutor(1, thread_name_prefix="kgp-ingest-write")
        embedded = self._embed_pool.submit(self._embed, plans)
        written = self._write_pool.submit(self._write, plans, embedded)
        self._inflight.append((batch, written))
        while len(self._inflight) > self._depth:
            self._complete_oldest()

    def _embed(self, plans: list[SourcePlan]) -> int:
        """Embed stage (a worker thread): vectors for every row of ``plans``."""
        if self._stop.is_set():
            raise _Cancelled()
        started = time.perf_counter()
        fault_point("embed")
        # plans from add_planned carry their vectors already
        plans = [p for p in plans if not p.embedded]
        count = embed_with_settings(plans, self.embedder, self.settings)
        self.timings["embed"] += time.perf_counter() - started
        return count

    def _write(self, plans: list[SourcePlan], embedded: Future[int]) -> int:
        """Write stage (a worker thread): one transaction, after the batch's vectors exist.

        A batch that fails (its embedding or its write) sets the stop flag itself, before the
        write thread can take the next batch: batches land in order, none after a failed one."""
        try:
            count = embedded.result()
            if self._stop.is_set():
                raise _Cancelled()
            started = time.perf_counter()
            fault_point("write")
            write_plans(self.graph, plans, self.run_id)
            fault_point("write")
            self.timings["write"] += time.perf_counter() - started
            return count
        except BaseException:
            self._stop.set()
            raise

    def _complete_oldest(self) -> None:
        """Wait for the oldest batch; record its sources (only in this thread: reports and
        progress callbacks are never touched by the workers)."""
        batch, written = self._inflight[0]
        try:
            texts = written.result()
        except BaseException:
            self._stop.set()
            raise
        self._inflight.popleft()
        self.report.texts_embedded += texts
        self._record(batch)

    def _drain_after_failure(self) -> None:
        """Wait for the batches in flight and record those that committed (they are in the
        graph; the report must say so).

        A failure on the caller's side (a parser, an interrupt) lets the batches planned before it
        land, as the serial pipeline would have written them before reaching it; a failed batch
        has already stopped every later one (:meth:`_write`)."""
        while self._inflight:
            batch, written = self._inflight.popleft()
            try:
                texts = written.result()
            except BaseException:  # noqa: BLE001 - the run already failed; this batch did not land
                continue
            self.report.texts_embedded += texts
            self._record(batch)
        self._shutdown_pools()

    def _shutdown_pools(self) -> None:
        for pool in (self._embed_pool, self._write_pool):
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
        self._embed_pool = self._write_pool = None

    def _record(self, batch: list[tuple[SourcePlan, bool]]) -> None:
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
        doomed = {sid: st["uri"] for sid, st in self.existing.items() if not keep(st["uri"])}
        delete_sources(self.graph, self.corpus, list(doomed))
        for sid, uri in doomed.items():
            self.existing.pop(sid, None)
            self.report.pruned.append(uri)
            self.emit(event="source", uri=uri, status="pruned")
        self.timings["prune"] += time.perf_counter() - started

    def _nlp_mode(self) -> str:
        """Whether the NLP step runs at the end of this ingestion: ``on``, ``off``, or ``auto``
        (decided by the corpus's shape once it is written; ``distill.nlp_on_ingest``). ``off``
        whatever the setting unless the NLP extractor is the one in use (``distill.extractor``:
        ``nlp``, or ``auto`` without an LLM and with spaCy installed)."""
        if self._nlp_setting is None:
            from kg_platform.distilling.nlp_step import resolve_extractor

            setting = self.settings.distill.nlp_on_ingest
            if setting is False or resolve_extractor(self.settings) != "nlp":
                self._nlp_setting = "off"
            else:
                self._nlp_setting = "auto" if setting == "auto" else "on"
        return self._nlp_setting

    def _start_nlp_parser(self, plan: SourcePlan) -> None:
        """At the first source with new chunks, start the NLP step's parser (a child process)
        when the step will run, so its spaCy pipeline loads while this run still embeds. Under
        ``auto`` the step itself waits for the corpus's shape at the end; the parser starts
        ahead when the corpus (or, for a new corpus, this first source) looks like short
        passages, and is closed unused if the end decides otherwise."""
        if self._nlp_parser is not None or self._nlp_parser_considered:
            return
        self._nlp_parser_considered = True
        mode = self._nlp_mode()
        if mode == "off" or (mode == "auto" and not self._looks_like_passages(plan)):
            return
        from kg_platform.distilling.nlp_parser import NlpParser

        cfg = self.settings.tuning.distill
        self._nlp_parser = NlpParser(
            self.settings.distill.nlp_model,
            in_child=cfg.nlp_parse_process,
            relations=self.settings.distill.relations,
        ).start()

    def _looks_like_passages(self, plan: SourcePlan) -> bool:
        """The guess that starts the parser early: the shape of the corpus as it was, or for a
        corpus new in this run, whether ``plan``'s source is a passage of a few chunks."""
        from kg_platform.graph.corpus_shape import corpus_holds_passages, holds_documents

        if self.existing:
            return corpus_holds_passages(self.graph, self.corpus)
        return not holds_documents(1, sum(1 for chunk in plan.chunks if chunk.level == 2))

    def _close_nlp_parser(self) -> None:
        parser, self._nlp_parser = self._nlp_parser, None
        if parser is not None:
            parser.close()

    def _sync_references(self) -> None:
        """REFERENCES edges between the corpus's sources that name each other's titles."""
        from kg_platform.ingest.references import sync_references

        self.emit(event="phase", name="references")
        started = time.perf_counter()
        refs = sync_references(self.graph, self.corpus, lease_s=self.settings.tuning.jobs.lease_s)
        self.timings["references"] = self.timings.get("references", 0.0) + (
            time.perf_counter() - started
        )
        if not refs.skipped:
            self.counts["references_edges"] = refs.edges
            self.counts["references_added"] = refs.added
            self.counts["references_removed"] = refs.removed

    def _distill_nlp(self) -> None:
        """The NLP extractor over the corpus's pending chunks, as :meth:`_nlp_mode` says: under
        ``auto`` only where ``auto`` retrieval reads the corpus as short passages (its default
        path there walks the entities; over long documents it runs ``propagate``, which does
        not read them, and the report says how to build them anyway). Under the corpus's
        distillation lock; a running distillation already covers the same chunks, so a held
        lock skips with a log line."""
        from kg_platform.distilling.nlp_step import extract_entities_nlp
        from kg_platform.distilling.runner import distill_lock_name
        from kg_platform.graph.corpus_shape import corpus_holds_passages
        from kg_platform.graph.lock import JobLock

        mode = self._nlp_mode()
        if mode == "off":
            return
        if mode == "auto" and not corpus_holds_passages(self.graph, self.corpus):
            self.report.entities = ENTITIES_SKIPPED_FOR_DOCUMENTS
            return
        self.emit(event="phase", name="entities")
        started = time.perf_counter()
        lock = JobLock(
            self.graph, distill_lock_name(self.corpus), lease_s=self.settings.tuning.jobs.lease_s
        )
        if not lock.acquire():
            log.warning(
                "NLP entities skipped: a distillation of corpus %r is running (%s)",
                self.corpus,
                lock.holder,
            )
            return
        try:
            res = extract_entities_nlp(
                self.graph,
                self.embedder,
                self.settings,
                corpus=self.corpus,
                parser=self._nlp_parser,
            )
        finally:
            lock.release()
        self.timings["entities"] += time.perf_counter() - started
        self.counts["entity_chunks"] = res.chunks
        self.counts["entity_mentions"] = res.written
        self.counts["entity_relations"] = res.relations
        for phase, seconds in res.timings.items():
            self.timings[f"entities_{phase}"] = seconds
        if res.failed:
            self.counts["entity_chunks_failed"] = len(res.failed)
        if res.chunks or res.failed:
            self.report.entities = (
                f"entities (NLP extractor): {res.chunks} chunks read, {res.written} mentions, "
                f"{res.relations} relations"
                + (f", {len(res.failed)} chunks failed (see the log)" if res.failed else "")
            )

    def finish(self, fatal: BaseException | None = None) -> IngestReport:
        """Sync the piece graph (unless the run failed), record the run, return the report."""
        rep = self.report
        try:
            if fatal is None:
                self.flush()
                self._shutdown_pools()
                self._unlock()  # writes done: the next run of this corpus may start
                self.emit(event="phase", name="piece_graph")
                started = time.perf_counter()
                pg = self.settings.tuning.piece_graph
                fault_point("piece_graph")
                sync = sync_piece_graph(
                    self.graph,
                    self.corpus,
                    pg.k_graph,
                    pg.t_graph,
                    candidates=pg.candidates,
                    rebuild_factor=pg.rebuild_factor,
                )
                self.timings["piece_graph"] += time.perf_counter() - started
                if not sync.skipped:
                    self.counts["similar_added"] = sync.added
                    self.counts["similar_removed"] = sync.removed
                    self.counts["similar_edges"] = sync.edges
                    self.counts["piece_graph_pending"] = sync.pending
                    self.report.piece_graph_mode = sync.mode
                self._sync_references()
                self._distill_nlp()
        except BaseException as exc:  # noqa: BLE001 - recorded below, then re-raised by caller
            fatal = exc
        self._close_nlp_parser()
        if fatal is not None:
            # no worker thread may still write once another run can take the corpus's lock
            try:
                self._drain_after_failure()
            finally:
                self._unlock()
            rep.status = "cancelled" if isinstance(fatal, RunCancelled) else "failed"
            rep.fatal = f"{type(fatal).__name__}: {fatal}"
        else:
            rep.status = "completed_with_errors" if rep.errors else "completed"
            if "similar_edges" not in self.counts:
                rows = self.graph.read_raw(
                    "MATCH (co:Corpus {name: $corpus}) RETURN co.piece_graph_edges AS n",
                    corpus=self.corpus,
                )
                self.counts["similar_edges"] = int(rows[0]["n"] or 0) if rows else 0
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
