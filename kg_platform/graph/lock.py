"""A named lock held in Neo4j: at most one holder of a job, a corpus's ingestion or its
distillation, across processes and hosts (it lives with the graph client because ingestion and
distillation take it as well as the jobs runner).

The lock is a ``(:JobLock {name, owner, expires})`` node. Acquiring it is one compare-and-set
statement (``cypher/jobs/lock_acquire``): it succeeds when the lock is free, expired, or already
ours. The holder renews its lease from a background thread every ``lease / 3`` seconds, so a
crashed holder (kill -9, lost machine) blocks the job for at most one lease. All times come from
the database's clock, which every contender shares, so skewed machine clocks cannot break it.

A holder that was a process of this host and no longer runs (its owner id is ``host:pid:...``)
is reclaimed at once instead of after its lease: after a kill -9 the next run on the same machine
need not wait. Holders on other hosts are only judged by their lease.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType

from kg_platform._process import pid_alive
from kg_platform.errors import JobError, JobLocked
from kg_platform.graph import GraphClient

log = logging.getLogger(__name__)


def new_owner() -> str:
    """An owner id that says where the holder runs: ``host:pid:random``."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def dead_local_owner(owner: str | None) -> bool:
    """Whether ``owner`` names a process of this host that no longer runs."""
    if not owner:
        return False
    parts = owner.split(":")
    if len(parts) < 3 or not parts[-2].isdigit():
        return False
    host, pid = ":".join(parts[:-2]), int(parts[-2])
    return host == socket.gethostname() and pid != os.getpid() and not pid_alive(pid)


@dataclass(frozen=True)
class LockState:
    name: str
    held: bool
    owner: str | None
    expires_ms: int | None
    run_id: str | None


class JobLock:
    """``with JobLock(graph, "nightly", lease_s=60):`` runs the block only if the lock is won.

    ``acquire()`` returns False (never blocks) when someone else holds the lock; the context
    manager raises :class:`JobError` instead. ``lost`` turns True if a renewal found the lock
    taken by another owner (our lease expired, e.g. after a long GC pause or network cut).
    """

    def __init__(
        self, graph: GraphClient, name: str, *, lease_s: float = 60.0, owner: str | None = None
    ) -> None:
        if lease_s < 1:
            raise JobError(
                f"lock lease must be at least 1 s, got {lease_s}",
                hint="set KGP_TUNING__JOBS__LEASE_S to a few tens of seconds",
            )
        self.graph = graph
        self.name = name
        self.lease_s = lease_s
        self.owner = owner or new_owner()
        self.held = False
        self.lost = False
        self.holder: str | None = None
        self.run_id: str | None = None
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None

    @property
    def _lease_ms(self) -> int:
        return int(self.lease_s * 1000)

    def acquire(self) -> bool:
        rec = self.graph.write(
            "jobs/lock_acquire", job=self.name, owner=self.owner, lease_ms=self._lease_ms
        )[0]
        self.holder = rec["owner"]
        if not rec["acquired"]:
            if not dead_local_owner(self.holder):
                return False
            taken = self.graph.write(
                "jobs/lock_reclaim",
                job=self.name,
                dead=self.holder,
                owner=self.owner,
                lease_ms=self._lease_ms,
            )
            if not taken:
                return False
            log.warning(
                "lock %r: its holder %s is no longer running; taken over", self.name, self.holder
            )
            self.holder = self.owner
        self.held, self.lost = True, False
        self._stop.clear()
        self._renewer = threading.Thread(
            target=self._renew_loop, name=f"joblock-{self.name}", daemon=True
        )
        self._renewer.start()
        return True

    def wait_acquire(
        self,
        timeout_s: float,
        poll_s: float = 1.0,
        on_wait: Callable[[str | None], None] | None = None,
    ) -> bool:
        """``acquire``, polling every ``poll_s`` until it succeeds or ``timeout_s`` passes
        (False then). ``on_wait(holder)`` is called once, when the first attempt fails."""
        deadline = time.monotonic() + max(0.0, timeout_s)
        told = False
        while True:
            if self.acquire():
                return True
            if not told and on_wait is not None:
                on_wait(self.holder)
                told = True
            if time.monotonic() >= deadline:
                return False
            time.sleep(min(poll_s, max(0.05, deadline - time.monotonic())))

    def renew(self) -> bool:
        """Extend the lease now; False means the lock is no longer ours."""
        rows = self.graph.write(
            "jobs/lock_renew",
            job=self.name,
            owner=self.owner,
            lease_ms=self._lease_ms,
            run_id=self.run_id,
        )
        if not rows:
            self.lost = True
        return bool(rows)

    def _renew_loop(self) -> None:
        while not self._stop.wait(self.lease_s / 3):
            try:
                if not self.renew():
                    log.error("job lock %r was lost: another owner holds it now", self.name)
                    return
            except Exception as exc:  # noqa: BLE001 - keep trying until the lease runs out
                # a server known to be gone is reported once, by the statement that found it
                level = (
                    logging.INFO if getattr(self.graph, "unavailable", False) else logging.WARNING
                )
                log.log(level, "could not renew job lock %r: %s", self.name, exc)

    def release(self) -> None:
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join(timeout=5)
            self._renewer = None
        if self.held and getattr(self.graph, "unavailable", False):
            log.warning(
                "Neo4j is unavailable: lock %r is left to expire (a dead holder on this "
                "host is taken over at once)",
                self.name,
            )
        elif self.held:
            try:
                self.graph.write("jobs/lock_release", job=self.name, owner=self.owner)
            except Exception as exc:  # noqa: BLE001 - the lease expires on its own
                log.warning(
                    "could not release job lock %r (it expires in %.0fs): %s",
                    self.name,
                    self.lease_s,
                    exc,
                )
        self.held = False

    def __enter__(self) -> "JobLock":
        if not self.acquire():
            raise JobLocked(
                f"job {self.name!r} is already running (lock held by {self.holder})",
                hint="wait for that run to finish; `kgp jobs status` shows the lock; "
                "a crashed holder's lock expires after the lease (KGP_TUNING__JOBS__LEASE_S)",
            )
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


def lock_states(graph: GraphClient, names: list[str] | None = None) -> dict[str, LockState]:
    rows = graph.read("jobs/locks", names=names)
    return {
        r["name"]: LockState(r["name"], bool(r["held"]), r["owner"], r["expires"], r["run_id"])
        for r in rows
    }
