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
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
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

__all__ = ["kill_summary", "run_http_load", "run_kill_load", "started_server"]

START_TIMEOUT_S = 180.0


@contextmanager
def started_server(env: dict[str, str] | None = None) -> Iterator[str]:
    """Run ``kgp serve`` on a free loopback port until ready; yield its base URL. Its rate
    limit is lifted (the load measures the server, not the limiter).

    Its log goes to a temporary file, not a pipe: nobody reads a pipe during the load, and a
    server that logs more than the pipe holds (64 KB: a Neo4j kill logs a line per failed
    request) would block on its next log line and be measured stalled."""
    import httpx

    from kg_platform._process import free_port, stop_child

    port = free_port()
    kgp = Path(sys.executable).with_name("kgp")
    with tempfile.TemporaryFile(mode="w+", prefix="kgp-bench-serve-") as server_log:
        proc = subprocess.Popen(
            [str(kgp), "serve", "--host", "127.0.0.1", "--port", str(port)],
            env=(env or dict(os.environ))
            | {"KGP_SERVE__RATE_PER_S": "100000", "KGP_SERVE__RATE_BURST": "100000"},
            stdout=subprocess.DEVNULL,
            stderr=server_log,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            while True:
                if proc.poll() is not None:
                    server_log.seek(0)
                    raise ConfigError(
                        f"kgp serve exited with {proc.returncode}: {server_log.read()[-1000:]}",
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
                        hint=f"check `curl {base}/v1/ready`: Neo4j reachable, schema applied?",
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


# --------------------------------------------------------------------- a Neo4j kill mid-load

#: what the kill run ingests into its own Neo4j (the repository's sample documents)
SAMPLES_DIR = Path(__file__).resolve().parents[3] / "ingestion" / "samples"
KILL_CORPUS = "bench-kill"
#: how long the load goes on once the restarted Neo4j is ready (at least)
RECOVER_WINDOW_S = 5.0


@dataclass
class Answer:
    """One request of the kill run: when it was sent and answered (monotonic), and how."""

    sent: float
    answered: float
    status: int  # the HTTP status, 0 for a transport error
    key: str  # "server" (the server's own key) or "graph" (a key kept in the graph)

    @property
    def latency_ms(self) -> float:
        return (self.answered - self.sent) * 1000


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)


def kill_summary(
    answers: list[Answer], *, began: float, killed: float, ready: float, clients: int
) -> dict[str, Any]:
    """The kill run's figures: the steady load before the kill, the requests answered while
    Neo4j was down (from the kill until the restarted server was ready), and the recovery
    (from ready to the first 200 answer, per kind of key)."""

    def phase(selected: list[Answer]) -> dict[str, Any]:
        latencies = [a.latency_ms for a in selected]
        statuses: dict[str, int] = {}
        for a in selected:
            statuses[str(a.status)] = statuses.get(str(a.status), 0) + 1
        return {
            "requests": len(selected),
            "statuses": statuses,
            "p50_ms": _percentile(latencies, 0.50),
            "p99_ms": _percentile(latencies, 0.99),
            "max_ms": round(max(latencies), 1) if latencies else None,
        }

    before = [a for a in answers if a.answered < killed]
    down = [a for a in answers if killed <= a.answered < ready]
    after = [a for a in answers if a.answered >= ready]
    first_503 = min((a.answered for a in down if a.status == 503), default=None)
    recovery: dict[str, float | None] = {}
    for kind in ("server", "graph"):
        first = min((a.answered for a in after if a.status == 200 and a.key == kind), default=None)
        recovery[f"{kind}_key_first_200_after_ready_s"] = (
            round(first - ready, 3) if first is not None else None
        )
    return {
        "clients": clients,
        "kill_after_s": round(killed - began, 2),
        "down_s": round(ready - killed, 2),
        "before_kill": phase(before),
        "while_down": phase(down)
        | {
            "first_503_after_kill_s": round(first_503 - killed, 3) if first_503 else None,
            "sent_after_kill": phase([a for a in down if a.sent >= killed]),
        },
        "after_ready": phase(after),
        "recovery": recovery,
        "other_statuses": sorted(
            {a.status for a in answers} - {200, 503}
        ),  # anything but 200 and 503 is an error of the run
    }


def run_kill_load(
    *,
    clients: int,
    seconds: float,
    kill_after: float,
    strategy: str | None = None,
    k: int = 5,
    select: str | None = None,
    questions: list[str] | None = None,
    progress: Any = None,
) -> dict[str, Any]:
    """The HTTP load against a Neo4j of its own that is killed mid-run and started again.

    Starts a Neo4j on free loopback ports in a temporary folder (never the configured one:
    it is the only server this kills, by the pid it started), ingests the sample documents
    into it, adds a read key for that corpus to the graph, starts ``kgp serve`` over it and
    drives ``clients`` threads of ``POST /v1/search`` (half of them with the server's key,
    half with the graph key). ``kill_after`` seconds in, it SIGKILLs that Neo4j, starts it
    again at once, and goes on until ``seconds`` have passed and the restarted server has
    been ready for :data:`RECOVER_WINDOW_S`. Everything is removed afterwards."""
    import shutil
    import signal
    import tempfile

    import httpx

    from kg_platform._process import free_port, pid_alive, port_open
    from kg_platform.config import Settings
    from kg_platform.neo4j_server import LocalNeo4j
    from kg_platform.sdk.platform import KnowledgePlatform
    from kg_platform.serve.keys import KeyStore, new_key

    if not 1 <= clients <= MAX_CLIENTS:
        raise ConfigError(
            f"--clients must be 1..{MAX_CLIENTS}, got {clients}", hint="this is a bounded load test"
        )
    if not 0 < kill_after < seconds <= MAX_SECONDS:
        raise ConfigError(
            f"--kill-neo4j-after must be in (0, --seconds), got {kill_after} with --seconds "
            f"{seconds}",
            hint="e.g. --seconds 40 --kill-neo4j-after 10",
        )
    if not SAMPLES_DIR.is_dir():
        raise ConfigError(
            f"the sample documents are not at {SAMPLES_DIR}",
            hint="run the kill benchmark from a checkout of the repository",
        )
    say = progress or (lambda _message: None)
    base_dir = Path(tempfile.mkdtemp(prefix="kgp-bench-kill-"))
    neo4j = LocalNeo4j(  # a loaded machine may take minutes to start it again
        Settings(
            neo4j={"heap": "512m", "pagecache": "128m"},
            tuning={"neo4j": {"start_timeout_s": 900}},
        ),
        home=base_dir / "neo4j",
        bolt_port=free_port(),
        http_port=free_port(),
    )
    try:
        say(f"starting a Neo4j of the benchmark's own on {neo4j.bolt_uri()}")
        neo4j.start()
        settings = Settings(
            neo4j={"uri": neo4j.bolt_uri(), "password": neo4j.password()},
            data_dir=base_dir / "data",
            distill={"nlp_on_ingest": False},
        )
        with KnowledgePlatform(settings) as kp:
            say(f"ingesting {SAMPLES_DIR} into {KILL_CORPUS!r}")
            report = kp.ingest([SAMPLES_DIR], corpus=KILL_CORPUS)
            if report.status != "completed":
                raise ConfigError(
                    f"ingesting the samples ended {report.status}", hint=report.summary()
                )
            graph_key, _ = KeyStore(kp.graph).add("bench-kill-reader", [KILL_CORPUS], "read")
        server_key = new_key()
        env = dict(os.environ)
        env.pop("KGP_API_KEY", None)
        env.update(
            NEO4J_URI=settings.neo4j.uri,
            NEO4J_PASSWORD=neo4j.password(),
            KGP_DATA_DIR=str(settings.data_dir),
            KGP_API_KEY=server_key,
            KGP_DISTILL__NLP_ON_INGEST="false",
            KGP_TUNING__SERVE__AUTH_FAIL_LIMIT="100000",
        )
        qs = questions or DEFAULT_QUESTIONS
        with started_server(env) as base:
            say(f"kgp serve is ready at {base}; load for {seconds:.0f} s, kill at {kill_after} s")
            answers: list[Answer] = []
            lock = threading.Lock()
            stop = threading.Event()

            def body(question: str) -> dict[str, Any]:
                out: dict[str, Any] = {"query": question, "k": k, "corpus": KILL_CORPUS}
                for name, value in (("strategy", strategy), ("select", select)):
                    if value is not None:
                        out[name] = value
                return out

            def client(index: int) -> None:
                kind = "server" if index % 2 == 0 else "graph"
                key = server_key if kind == "server" else graph_key
                headers = {"Authorization": f"Bearer {key}"}
                with httpx.Client(base_url=base, headers=headers, timeout=120) as http:
                    n = index
                    while not stop.is_set():
                        question = qs[n % len(qs)]
                        n += clients
                        sent = time.monotonic()
                        try:
                            status = http.post("/v1/search", json=body(question)).status_code
                        except httpx.HTTPError:
                            status = 0
                        with lock:
                            answers.append(Answer(sent, time.monotonic(), status, kind))
                        if status == 503:
                            time.sleep(0.01)  # as a client that honours nothing but a pause

            with httpx.Client(base_url=base, timeout=120) as warm:
                for key in (server_key, graph_key):
                    first = warm.post(
                        "/v1/search",
                        json=body(qs[0]),
                        headers={"Authorization": f"Bearer {key}"},
                    )
                    if first.status_code != 200:
                        raise ConfigError(
                            f"the warm-up search answered HTTP {first.status_code}: "
                            f"{first.text[:300]}",
                            hint="see kgp serve's log",
                        )
            threads = [
                threading.Thread(target=client, args=(i,), daemon=True) for i in range(clients)
            ]
            began = time.monotonic()
            for t in threads:
                t.start()
            time.sleep(kill_after)
            pid = neo4j.status().pid
            if not pid:
                raise ConfigError("the benchmark's Neo4j has no pid", hint="see its log")
            os.kill(pid, signal.SIGKILL)  # the Neo4j this run started, by its pid
            killed = time.monotonic()
            # gone once its ports are closed: a JVM's main thread shows as a zombie while its
            # other threads still exit, holding the sockets
            gone_by = time.monotonic() + 120
            while pid_alive(pid) or port_open(neo4j.bolt_port) or port_open(neo4j.http_port):
                if time.monotonic() > gone_by:
                    raise ConfigError(
                        f"the killed Neo4j (pid {pid}) still holds its ports after 120 s",
                        hint="see `ss -ltnp`",
                    )
                time.sleep(0.01)
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass
            say(f"killed Neo4j (pid {pid}); starting it again")
            neo4j.start()
            ready = time.monotonic()
            say(f"Neo4j is ready again after {ready - killed:.1f} s")
            end = max(began + seconds, ready + RECOVER_WINDOW_S)
            while time.monotonic() < end:
                time.sleep(0.05)
            stop.set()
            for t in threads:
                t.join(timeout=180)
        with lock:
            done = list(answers)
        return kill_summary(done, began=began, killed=killed, ready=ready, clients=clients) | {
            "strategy": strategy or "default",
            "transport": "http",
            "neo4j": "own (started, killed with SIGKILL and restarted by the benchmark)",
        }
    finally:
        neo4j.stop()
        shutil.rmtree(base_dir, ignore_errors=True)
