"""The CPU accounting behind `kgp lab bench ingest`'s ceiling: this process's CPU seconds, and a local
server's found by the port it listens on (Linux /proc)."""

from __future__ import annotations

import os
import socket
import sys

import pytest

from kg_platform_lab.bench.cpu import CpuClock, listening_pid, pid_cpu_s, self_cpu_s

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _burn(seconds: float) -> None:
    end = self_cpu_s() + seconds
    while self_cpu_s() < end:
        sum(i * i for i in range(1000))


def test_the_listening_process_is_found_by_its_port() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        assert listening_pid(f"bolt://127.0.0.1:{port}") == os.getpid()
        assert listening_pid(f"neo4j://localhost:{port}") == os.getpid()
    assert listening_pid(f"bolt://127.0.0.1:{port}") is None  # closed: nobody listens
    assert listening_pid("neo4j+s://abc.databases.neo4j.io:7687") is None  # remote: not ours


def test_cpu_seconds_of_this_process_agree_from_both_sources() -> None:
    _burn(0.2)
    by_proc, by_rusage = pid_cpu_s(os.getpid()), self_cpu_s()
    assert by_proc is not None and abs(by_proc - by_rusage) < 0.1
    assert pid_cpu_s(2**22 + 12345) is None  # no such process


def test_the_clock_counts_the_work_between_start_and_stop() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        clock = CpuClock(f"bolt://127.0.0.1:{server.getsockname()[1]}")
        clock.start()
        _burn(0.3)
        clock.stop()
    assert clock.neo4j_pid == os.getpid()  # the "server" here is this very process
    assert 0.25 < clock.self_s < 1.5
    assert clock.neo4j_s is not None and abs(clock.neo4j_s - clock.self_s) < 0.1
    remote = CpuClock("bolt://db.example.com:7687")
    remote.start()
    remote.stop()
    assert remote.neo4j_pid is None and remote.neo4j_s is None
