"""Fail fast while Neo4j is gone: a circuit breaker over the graph, owned by the
:class:`~kg_platform.serve.service.Service`.

Without it every request of a server whose Neo4j died waits for the driver's retry budget
(13-16 s) before its 503, and the requests parked meanwhile finish seconds after Neo4j is back.
With it:

- a request that fails with the graph unavailable, or a failed probe, *opens* the breaker;
- while it is open a background thread probes Neo4j every :attr:`GraphHealth.interval_s` with
  a driver of its own (short connect and acquisition timeouts, no transaction retries), every
  request answers 503 (``Retry-After: 1``) after at most :attr:`GraphHealth.hold_s` (sooner
  served, if the breaker closes meanwhile; :meth:`GraphHealth.hold`), and the requests already
  waiting on the database are answered 503 at once (their threads are abandoned to the
  driver);
- the first successful probe closes it: the next request runs as usual. With a ``warm``
  callable the probe of an open breaker also runs the statements requests run (the key
  table's read and one default search, on the requests' own driver) before it closes: a
  Neo4j that was just restarted answers ``RETURN 1`` at once but plans each statement afresh
  on a cold JVM (its first read of the key table took 14 s under load, the default search
  seconds), and the requests that came in meanwhile each planned them again, waited, and
  then answered 503 or a late 200. While the warm-up runs the breaker stays open (held
  503s, ``Retry-After: 1``); once it closes, ``/v1/health`` says ok, a graph key is checked at
  once and a search finds its plans cached. Statements of other strategies and paths are
  still planned by their first request.

While requests are in flight the same thread probes every :attr:`GraphHealth.watch_s`, so a
database that dies under a running query is noticed without waiting for the query's driver.
An idle server does not probe.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import anyio
import anyio.to_thread

from kg_platform.serve.problems import Problem, graph_unavailable

T = TypeVar("T")

__all__ = ["GraphHealth"]

log = logging.getLogger(__name__)

_SLOW = "slow"
#: how recent a late probe's success must be to close the breaker without probing again (s)
FRESH_S = 1.0


class GraphHealth:
    """The breaker: ``probe()`` returns when the graph answers and raises when it does not."""

    def __init__(
        self,
        probe: Callable[[], None],
        *,
        warm: Callable[[], None] | None = None,
        interval_s: float = 0.25,
        watch_s: float = 0.5,
        probe_timeout_s: float = 2.0,
        hold_s: float = 0.25,
    ) -> None:
        self._probe = probe
        self._warm = warm
        self.interval_s = interval_s
        self.watch_s = watch_s
        self.probe_timeout_s = probe_timeout_s
        self.hold_s = hold_s
        self._cond = threading.Condition()
        self._degraded = False
        self._since = 0.0
        self._busy = 0
        self._suspect = False
        self._last_probe = 0.0
        self._closed = False
        self._probing: threading.Thread | None = None  # a probe that outlived its time
        self._late_outcome: tuple[float, str | None] = (0.0, "no probe yet")
        self._thread = threading.Thread(target=self._loop, name="kgp-graph-health", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ state
    @property
    def degraded(self) -> bool:
        return self._degraded

    def unavailable(self) -> Problem:
        """The 503 a request gets while the breaker is open."""
        return Problem(
            503,
            "the graph database is unavailable; the server answers again as soon as it is back",
            kind="graph-unavailable",
            hint="retry in a few seconds; if it lasts, the server's operator should check "
            "Neo4j (`kgp neo4j status`)",
            headers={"retry-after": "1"},
        )

    def check(self) -> None:
        """Raise the 503 problem while the breaker is open."""
        if self._degraded:
            raise self.unavailable()

    async def hold(self) -> None:
        """Before a request's 503 of an open breaker: wait up to :attr:`hold_s`, less when it
        closes meanwhile (then the request is served after all).

        A client that retries in a loop, honouring nothing but a short pause, otherwise gets
        hundreds of 503s a second, and answering them takes CPU the restarting Neo4j and its
        warm-up need (``kgp lab bench load --http --kill-neo4j-after`` measures it; the lab's
        operations log has the figures). The wait costs no thread; the 503 still comes within
        a second."""
        deadline = time.monotonic() + self.hold_s
        while self._degraded and (left := deadline - time.monotonic()) > 0:
            await anyio.sleep(min(0.05, left))

    def trip(self, reason: str) -> None:
        """Open the breaker (the graph is unavailable: a failed request or probe says so)."""
        with self._cond:
            if not self._degraded:
                self._degraded = True
                self._since = time.monotonic()
                log.warning("Neo4j is unavailable (%s); answering 503 until it is back", reason)
            self._cond.notify_all()

    def recovered(self) -> None:
        with self._cond:
            if self._degraded:
                log.warning(
                    "Neo4j answers again after %.1f s; serving", time.monotonic() - self._since
                )
            self._degraded = False
            self._suspect = False
            self._cond.notify_all()

    def failed(self, exc: BaseException) -> None:
        """Account for a request's failure: the graph unavailable opens the breaker; another
        graph error makes the monitor probe at once (the probe decides)."""
        if graph_unavailable(exc):
            self.trip(type(exc).__name__)
            return
        from kg_platform.errors import GraphError

        if isinstance(exc, GraphError):
            with self._cond:
                self._suspect = True
                self._cond.notify_all()

    @contextmanager
    def busy(self) -> Iterator[None]:
        """Count a request in flight (the monitor watches the graph while there is one)."""
        with self._cond:
            self._busy += 1
            self._cond.notify_all()
        try:
            yield
        finally:
            with self._cond:
                self._busy -= 1

    async def run(self, fn: Callable[[], T], limiter: anyio.CapacityLimiter) -> T:
        """``fn()`` in a worker thread, failing fast: 503 within :attr:`hold_s` while the breaker
        is open (:meth:`hold`), and 503 as soon as it opens while ``fn`` waits on the database
        (its thread is left to the driver's own timeouts)."""
        if self._degraded:
            await self.hold()
        self.check()
        outcome: list[tuple[bool, object]] = []
        with self.busy():
            async with anyio.create_task_group() as group:

                async def work() -> None:
                    try:
                        value = await anyio.to_thread.run_sync(
                            fn, limiter=limiter, abandon_on_cancel=True
                        )
                        outcome.append((True, value))
                    except Exception as exc:  # noqa: BLE001 - re-raised below, outside the group
                        outcome.append((False, exc))
                    group.cancel_scope.cancel()

                async def watch() -> None:
                    while not self._degraded:
                        await anyio.sleep(0.05)
                    group.cancel_scope.cancel()

                group.start_soon(work)
                group.start_soon(watch)
        if not outcome:
            raise self.unavailable()
        ok, value = outcome[0]
        if ok:
            return value  # type: ignore[return-value]
        assert isinstance(value, Exception)
        self.failed(value)
        raise value

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._thread.join(timeout=5)

    # ---------------------------------------------------------------- monitor
    def _due(self, now: float) -> float | None:
        """Seconds until the next probe (0: now), None when there is nothing to watch."""
        if self._degraded:
            return max(0.0, self._last_probe + self.interval_s - now)
        if self._suspect:
            return 0.0
        if self._busy:
            return max(0.0, self._last_probe + self.watch_s - now)
        return None

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._closed:
                    wait = self._due(time.monotonic())
                    if wait is not None and wait <= 0:
                        break
                    self._cond.wait(timeout=wait)
                if self._closed:
                    return
                self._suspect = False
            self._last_probe = time.monotonic()
            error = self._probe_once()
            if error is None:
                self.recovered()
            elif error.startswith(_SLOW) and not self._degraded:
                # a slow answer is not a dead server (a loaded machine): the requests' own
                # errors decide then
                log.info("the graph health probe was slow (%s)", error)
            else:
                self.trip(error)

    def _probe_once(self) -> str | None:
        """None when the graph answered within the probe's time, else why not. The probe runs in
        a thread of its own so that a server that accepts but never answers cannot stall it.

        A probe that outlived its time but then succeeded counts once it is seen, if it ended
        within the last :data:`FRESH_S`: the warm-up of a just restarted Neo4j takes seconds
        (planning on a cold JVM), and running it all again only to answer within the time
        would keep the breaker open for one more warm-up."""
        late = self._probing
        if late is not None:
            if late.is_alive():
                return f"{_SLOW}: the previous probe is still waiting for Neo4j"
            self._probing = None
            ended, error = self._late_outcome
            if error is None and time.monotonic() - ended <= FRESH_S:
                return None
        outcome: list[str | None] = []

        def run() -> None:
            try:
                self._probe()
                if self._degraded and self._warm is not None:
                    self._warm()  # the requests' first statements, before the breaker closes
                outcome.append(None)
            except Exception as exc:  # noqa: BLE001 - any failure means: not available now
                outcome.append(f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}")
            self._late_outcome = (time.monotonic(), outcome[0])

        probing = threading.Thread(target=run, name="kgp-graph-probe", daemon=True)
        self._probing = probing
        probing.start()
        probing.join(timeout=self.probe_timeout_s)
        if not outcome:
            return f"{_SLOW}: no answer within {self.probe_timeout_s:.1f} s"
        self._probing = None  # answered in time: its outcome is this one
        return outcome[0]
