"""The executor of an ingestion run: batches of plans through the embed and write steps, with
the two overlapped in worker threads.

While the caller parses and plans batch N+2, one worker thread embeds batch N+1 (ONNX Runtime
releases the GIL) and another writes batch N to Neo4j (the driver waits on the socket). Each batch
is still one write transaction, written in order, so idempotency, skip-by-hash and crash-resume
are those of the serial pipeline: a kill leaves every batch committed whole or not at all. After
the first failure no later batch is written. The phase timings of ``embed`` and ``write`` are each
stage's busy time, so with overlap they add up to more than the wall time. ``depth = 0``
(``ingest.pipeline_batches = 0``) runs the stages one after another.

The runner (:class:`~kg_platform.ingest.runner.IngestRunner`) owns one executor per run; the
executor calls back ``on_written`` in the caller's thread only, so reports and progress
callbacks are never touched by the workers.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from kg_platform.ingest.rows import SourcePlan

__all__ = ["Batch", "BatchExecutor"]

#: plans of one transaction, each with whether it replaces a stored source
Batch = list[tuple[SourcePlan, bool]]


class _Cancelled(Exception):
    """A batch not embedded or written because an earlier batch failed."""


class BatchExecutor:
    def __init__(
        self,
        *,
        depth: int,
        transaction_rows: int,
        embed: Callable[[list[SourcePlan]], int],
        write: Callable[[list[SourcePlan]], None],
        on_written: Callable[[Batch, int], None],
        timings: dict[str, float],
    ) -> None:
        self._embed_step, self._write_step, self._on_written = embed, write, on_written
        self.timings = timings
        self._transaction_rows = transaction_rows
        self._pending: Batch = []
        self._pending_rows = 0
        # batches handed to the embed/write stages, oldest first, with the future of their write
        self._inflight: deque[tuple[Batch, Future[int]]] = deque()
        self._depth = max(0, int(depth))
        self._embed_pool: ThreadPoolExecutor | None = None
        self._write_pool: ThreadPoolExecutor | None = None
        self._stop = threading.Event()

    def queue(self, plan: SourcePlan, replaced: bool) -> None:
        """Add a plan to the pending batch; a full batch (``transaction_rows``) is submitted."""
        self._pending.append((plan, replaced))
        self._pending_rows += plan.node_count
        if self._pending_rows >= self._transaction_rows:
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
        count = self._embed_step(plans)
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
            self._write_step(plans)
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
        self._on_written(batch, texts)

    def drain_after_failure(self) -> None:
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
            self._on_written(batch, texts)
        self.shutdown()

    def shutdown(self) -> None:
        for pool in (self._embed_pool, self._write_pool):
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
        self._embed_pool = self._write_pool = None
