"""Fault hooks for the fault-injection suite, inert unless their variable is set.

Why in the product code: killing ``kgp ingest`` after a random delay mostly lands in model loading;
the suite needs kills spread over parse, embed, write and the piece-graph step, reproducibly, and
it needs a process held at a known point while it kills Neo4j or starts a rival run.

- ``KGP_FAULT_KILL=<phase>:<n>``: SIGKILL this process the nth time it reaches ``phase``
  (e.g. ``write:3``).
- ``KGP_FAULT_PAUSE=<phase>:<n>:<gate>``: the nth time, create ``<gate>.reached`` and wait until
  the file ``<gate>`` exists (at most 15 min), then go on.
- ``KGP_FAULT_TRACE=<file>``: append each phase reached to ``<file>``, one line each (a test waits
  on it for a point the process has passed instead of sleeping).

Phases: walk (each folder a run lists), parse, embed, write, piece_graph (ingestion), retrieve
(``kgp retrieve``), sigterm (the SIGTERM handler of a long command ran in the main thread,
``kg_platform/cli/signals.py``).
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

__all__ = ["fault_point"]

_counts: dict[str, int] = {}


def fault_point(phase: str) -> None:
    """Count a call of ``phase``; kill or pause this process when a fault variable says so."""
    kill = os.environ.get("KGP_FAULT_KILL")
    pause = os.environ.get("KGP_FAULT_PAUSE")
    trace = os.environ.get("KGP_FAULT_TRACE")
    if not kill and not pause and not trace:
        return
    if trace:
        with open(trace, "a", encoding="utf-8") as out:
            out.write(phase + "\n")
    _counts[phase] = _counts.get(phase, 0) + 1
    if kill:
        target, _, nth = kill.partition(":")
        if target == phase and _counts[phase] >= int(nth or 1):
            os.kill(os.getpid(), signal.SIGKILL)
    if pause:
        target, nth, gate = pause.split(":", 2)
        if target == phase and _counts[phase] == int(nth or 1):
            Path(gate + ".reached").touch()
            deadline = time.monotonic() + 900
            while not Path(gate).exists() and time.monotonic() < deadline:
                time.sleep(0.05)
