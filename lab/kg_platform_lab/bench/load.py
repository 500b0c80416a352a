"""A bounded concurrent-retrieval load through the SDK: N client threads, S seconds, one server.

Why threads on one :class:`KnowledgePlatform`: that is how an application serves many users (one
driver pool, one embedder); the figures then include the embedder and the pool, not only Neo4j.
Refuses anything but a loopback server so it can never be pointed at someone else's database.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from kg_platform.errors import ConfigError

__all__ = ["LoadResult", "run_load", "MAX_CLIENTS", "MAX_SECONDS"]

MAX_CLIENTS = 64
MAX_SECONDS = 600.0
DEFAULT_QUESTIONS = [
    "What is IBM known for?",
    "How are tables extracted from a PDF?",
    "Which formats can be converted to Markdown?",
    "Who founded the company?",
    "What does the library return for each page?",
]


@dataclass
class LoadResult:
    clients: int
    seconds: float
    strategy: str
    select: str | None = None  # None: the settings' default (retrieve.select)
    latencies_ms: list[float] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)

    def percentile(self, q: float) -> float:
        if not self.latencies_ms:
            return float("nan")
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    def summary(self) -> dict[str, Any]:
        return {
            "clients": self.clients,
            "seconds": round(self.seconds, 2),
            "strategy": self.strategy,
            "select": self.select or "default",
            "requests": len(self.latencies_ms),
            "throughput_rps": round(len(self.latencies_ms) / self.seconds, 2)
            if self.seconds
            else 0.0,
            "p50_ms": round(self.percentile(0.50), 1),
            "p95_ms": round(self.percentile(0.95), 1),
            "p99_ms": round(self.percentile(0.99), 1),
            "errors": dict(self.errors),
        }


def require_loopback(uri: str) -> None:
    """Raise unless ``uri`` names this machine (127.0.0.0/8, ::1 or localhost)."""
    host = urlparse(uri).hostname or ""
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, None)}
    except OSError as exc:
        raise ConfigError(
            f"cannot resolve {host!r}: {exc}", hint="use bolt://127.0.0.1:PORT"
        ) from exc
    if not addresses or not all(
        ipaddress.ip_address(a.split("%")[0]).is_loopback for a in addresses
    ):
        raise ConfigError(
            f"kgp lab bench load only targets a loopback server, not {host!r}",
            hint="run it against the local server (`kgp neo4j start`)",
        )


def run_load(
    platform: Any,
    *,
    clients: int,
    seconds: float,
    strategy: str = "hybrid",
    corpus: str | None = None,
    k: int = 5,
    questions: list[str] | None = None,
    select: str | None = None,
) -> LoadResult:
    """Drive ``clients`` threads of ``platform.retrieve`` for ``seconds``; collect latencies.

    ``select`` None runs the settings' default selection (``auto``: the late rerank with the
    bundled embedder). The few questions repeat, so the rerank's cache of candidate states makes
    it cheaper here than on questions new to the process."""
    if not 1 <= clients <= MAX_CLIENTS:
        raise ConfigError(
            f"--clients must be 1..{MAX_CLIENTS}, got {clients}", hint="this is a bounded load test"
        )
    if not 0 < seconds <= MAX_SECONDS:
        raise ConfigError(
            f"--seconds must be in (0, {MAX_SECONDS:.0f}], got {seconds}",
            hint="this is a bounded load test",
        )
    require_loopback(platform.graph.uri)
    qs = questions or DEFAULT_QUESTIONS
    result = LoadResult(clients=clients, seconds=seconds, strategy=strategy, select=select)
    lock = threading.Lock()
    platform.retrieve(qs[0], strategy=strategy, corpus=corpus, k=k, select=select)  # warm up
    start_gate = threading.Barrier(clients + 1)
    deadline = [0.0]

    def client(index: int) -> None:
        start_gate.wait()
        n = index
        while time.perf_counter() < deadline[0]:
            question = qs[n % len(qs)]
            n += clients
            t0 = time.perf_counter()
            try:
                platform.retrieve(question, strategy=strategy, corpus=corpus, k=k, select=select)
            except Exception as exc:  # noqa: BLE001 - counted and reported by type
                with lock:
                    result.errors[type(exc).__name__] = result.errors.get(type(exc).__name__, 0) + 1
                continue
            with lock:
                result.latencies_ms.append((time.perf_counter() - t0) * 1000)

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(clients)]
    for t in threads:
        t.start()
    began = time.perf_counter()
    deadline[0] = began + seconds
    start_gate.wait()
    for t in threads:
        t.join(timeout=seconds + 120)
    result.seconds = time.perf_counter() - began
    return result
