"""``kgp lab bench load --http``: the same bounded load as :mod:`kg_platform_lab.bench.load`, sent
as ``POST /v1/search`` requests to ``kgp serve`` by N client threads (one HTTP connection each).

Why a separate client: the figures then include what a remote caller pays (HTTP, JSON, the
gate, the server's thread pool) on top of the SDK call. Without ``--url`` it starts ``kgp serve``
on a free loopback port with this process's settings (so the same data dir and API key) and
stops it afterwards; a given URL must be a loopback one.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kg_platform.errors import ConfigError
from kg_platform_lab.bench.load import (
    DEFAULT_QUESTIONS,
    MAX_CLIENTS,
    MAX_SECONDS,
    LoadResult,
    require_loopback,
)

__all__ = ["run_http_load", "started_server"]

START_TIMEOUT_S = 180.0


@contextmanager
def started_server(env: dict[str, str] | None = None) -> Iterator[str]:
    """Run ``kgp serve`` on a free loopback port until ready; yield its base URL. Its rate
    limit is lifted (the load measures the server, not the limiter)."""
    import httpx

    from kg_platform._process import free_port, stop_child

    port = free_port()
    kgp = Path(sys.executable).with_name("kgp")
    proc = subprocess.Popen(
        [str(kgp), "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=(env or dict(os.environ))
        | {"KGP_SERVE__RATE_PER_S": "100000", "KGP_SERVE__RATE_BURST": "100000"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                raise ConfigError(
                    f"kgp serve exited with {proc.returncode}: {(proc.stderr.read() if proc.stderr else '')[-1000:]}",
                    hint="run `kgp serve` by hand to see why (is the serve extra installed?)",
                )
            try:
                if httpx.get(f"{base}/v1/ready", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise ConfigError(
                    f"kgp serve was not ready within {START_TIMEOUT_S:.0f} s",
                    hint="check `curl {base}/v1/ready`: Neo4j reachable, schema applied?",
                )
            time.sleep(0.3)
        yield base
    finally:
        stop_child(proc, timeout=30)


def run_http_load(
    base_url: str,
    key: str,
    *,
    clients: int,
    seconds: float,
    strategy: str | None = None,
    corpus: str | None = None,
    k: int = 5,
    questions: list[str] | None = None,
    select: str | None = None,
) -> LoadResult:
    """Drive ``clients`` threads of ``POST /v1/search`` for ``seconds``; collect latencies.

    A request counts as an error when it does not answer 200 (by status, e.g. ``HTTP 429``)
    or fails in transport (by exception type)."""
    import httpx

    if not 1 <= clients <= MAX_CLIENTS:
        raise ConfigError(
            f"--clients must be 1..{MAX_CLIENTS}, got {clients}", hint="this is a bounded load test"
        )
    if not 0 < seconds <= MAX_SECONDS:
        raise ConfigError(
            f"--seconds must be in (0, {MAX_SECONDS:.0f}], got {seconds}",
            hint="this is a bounded load test",
        )
    require_loopback(base_url)
    qs = questions or DEFAULT_QUESTIONS
    result = LoadResult(
        clients=clients, seconds=seconds, strategy=strategy or "default", select=select
    )
    lock = threading.Lock()
    headers = {"Authorization": f"Bearer {key}"}

    def body(question: str) -> dict[str, Any]:
        out: dict[str, Any] = {"query": question, "k": k}
        for name, value in (("strategy", strategy), ("corpus", corpus), ("select", select)):
            if value is not None:
                out[name] = value
        return out

    def count(error: str) -> None:
        with lock:
            result.errors[error] = result.errors.get(error, 0) + 1

    with httpx.Client(base_url=base_url, headers=headers, timeout=120) as warm:
        first = warm.post("/v1/search", json=body(qs[0]))
        if first.status_code != 200:
            raise ConfigError(
                f"the warm-up search answered HTTP {first.status_code}: {first.text[:300]}",
                hint="check the key (`kgp serve key`) and the corpus",
            )
    start_gate = threading.Barrier(clients + 1)
    deadline = [0.0]

    def client(index: int) -> None:
        with httpx.Client(base_url=base_url, headers=headers, timeout=120) as http:
            start_gate.wait()
            n = index
            while time.perf_counter() < deadline[0]:
                question = qs[n % len(qs)]
                n += clients
                t0 = time.perf_counter()
                try:
                    response = http.post("/v1/search", json=body(question))
                except httpx.HTTPError as exc:
                    count(type(exc).__name__)
                    continue
                if response.status_code != 200:
                    count(f"HTTP {response.status_code}")
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
        t.join(timeout=seconds + 180)
    result.seconds = time.perf_counter() - began
    return result
