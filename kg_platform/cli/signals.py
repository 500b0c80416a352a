"""SIGTERM ends a long command the way Ctrl-C does.

Why: schedulers, ``timeout``, systemd and Kubernetes stop a process with SIGTERM, whose default
action ends Python at once, without running a single ``finally``: an ingestion run then stays
recorded as ``running`` (until a later run of the same corpus finds its pid dead), its batches in
flight are abandoned mid-way and its corpus lock waits to be taken over. Turned into an exception
in the main thread, SIGTERM goes through the same path as Ctrl-C: the session lets the batches
already handed to the writer land, records the run as failed with the reason, releases the lock,
and the command exits with 143 (128 + SIGTERM), as a terminated process does.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import NoReturn

from kg_platform._faults import fault_point

__all__ = ["EXIT_TERMINATED", "Terminated", "exit_terminated", "sigterm_as_interrupt"]

EXIT_TERMINATED = 128 + signal.SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived; a ``KeyboardInterrupt`` so every Ctrl-C path (drain, record) handles it.

    It keeps the signal's name as an attribute. Why: the handler raises wherever the main thread
    happens to be, and when that is inside a codec (``zipfile`` decoding a DOCX member name with
    cp437, say), CPython re-creates a plain exception with the message "decoding with 'cp437'
    codec failed (Terminated: ...)". An exception whose instance carries attributes is left as
    raised, so the run's recorded reason and the user's message stay "stopped by SIGTERM".
    """

    def __init__(self, signal_name: str) -> None:
        super().__init__(f"stopped by {signal_name}")
        self.signal_name = signal_name


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    fault_point("sigterm")  # the fault suite waits on this instead of guessing a delay
    raise Terminated(signal.Signals(signum).name)


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`Terminated` in the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be installed from the main thread
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def exit_terminated(exc: Terminated, what_stays: str) -> NoReturn:
    """Say on stderr that the command was stopped and what it leaves behind; exit with 143."""
    import typer

    typer.secho(f"interrupted: {exc}; {what_stays}", fg=typer.colors.YELLOW, err=True)
    raise typer.Exit(EXIT_TERMINATED) from None
