"""A fault hook for the fault-injection suite: SIGKILL this process at the Nth call of a phase.

Why in the product code: killing ``kgp ingest`` after a random delay mostly lands in model loading;
the suite needs kills spread over parse, embed, write and the piece-graph step, reproducibly.
Inert unless ``KGP_FAULT_KILL`` is set, e.g. ``KGP_FAULT_KILL=write:3`` kills the process the
third time the ingestion reaches its write point. Phases: parse, embed, write, piece_graph.
"""

from __future__ import annotations

import os
import signal

__all__ = ["fault_point"]

_counts: dict[str, int] = {}


def fault_point(phase: str) -> None:
    """Count a call of ``phase``; kill -9 this process when ``KGP_FAULT_KILL`` says so."""
    spec = os.environ.get("KGP_FAULT_KILL")
    if not spec:
        return
    target, _, nth = spec.partition(":")
    if target != phase:
        return
    _counts[phase] = _counts.get(phase, 0) + 1
    if _counts[phase] >= int(nth or 1):
        os.kill(os.getpid(), signal.SIGKILL)
