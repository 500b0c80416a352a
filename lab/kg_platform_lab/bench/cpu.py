"""CPU seconds of this process and of a local Neo4j, for benchmarks that share a small machine.

Why: on two cores the embedder, the pipeline's Python and Neo4j's index maintenance compete for
the same CPUs, so overlapping them in time cannot make ingestion faster than their summed CPU
time divided by the cores. ``kgp lab bench ingest`` reports both processes' CPU seconds so that
ceiling is measured, not guessed. The Neo4j server is found as the process listening on the bolt
port (Linux ``/proc``); a remote server, or another OS, reports ``None``.
"""

from __future__ import annotations

import os
import resource
from pathlib import Path
from urllib.parse import urlsplit

__all__ = ["CpuClock", "listening_pid", "pid_cpu_s", "self_cpu_s"]

_LISTEN = "0A"  # TCP state LISTEN in /proc/net/tcp*


def self_cpu_s() -> float:
    """User + system CPU seconds of this process, all threads (ONNX Runtime's included)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def pid_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid``, or None when it cannot be read."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name (field 2) may hold spaces: split after its closing parenthesis
    fields = stat[stat.rindex(")") + 2 :].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks  # utime, stime (fields 14 and 15)


def _listening_inodes(port: int) -> set[str]:
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            if len(cols) > 9 and cols[3] == _LISTEN and int(cols[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(cols[9])
    return inodes


def listening_pid(uri: str) -> int | None:
    """The local process listening on ``uri``'s port, or None (remote host, not found)."""
    parts = urlsplit(uri)
    if parts.hostname not in ("127.0.0.1", "localhost", "::1") or parts.port is None:
        return None
    inodes = _listening_inodes(parts.port)
    if not inodes:
        return None
    targets = {f"socket:[{inode}]" for inode in inodes}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            for fd in (proc / "fd").iterdir():
                if os.readlink(fd) in targets:
                    return int(proc.name)
        except OSError:  # a process that ended, or one we may not inspect
            continue
    return None


class CpuClock:
    """CPU seconds spent by this process and by the local Neo4j between ``start`` and ``stop``."""

    def __init__(self, neo4j_uri: str) -> None:
        self.neo4j_pid = listening_pid(neo4j_uri)
        self._self0 = 0.0
        self._neo0: float | None = None
        self.self_s = 0.0
        self.neo4j_s: float | None = None

    def start(self) -> None:
        self._self0 = self_cpu_s()
        self._neo0 = pid_cpu_s(self.neo4j_pid) if self.neo4j_pid else None

    def stop(self) -> None:
        self.self_s = self_cpu_s() - self._self0
        end = pid_cpu_s(self.neo4j_pid) if self.neo4j_pid else None
        self.neo4j_s = end - self._neo0 if end is not None and self._neo0 is not None else None
