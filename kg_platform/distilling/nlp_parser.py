"""spaCy parsing for the NLP extractor, in a child process beside the one that writes.

Why a child process: the NLP step alternates parsing (spaCy, one core, about half the step) with
resolution and writing (embedding names on both cores, Neo4j). Parsing the next batch in a child
while this process resolves and writes the last one keeps both cores busy, and the child loads the
spaCy pipeline (~2 s) while ingestion is still embedding, instead of after it.

Why a plain subprocess and not ``multiprocessing``: a spawned ``multiprocessing`` child re-runs the
caller's main script, so a user's SDK script without a ``__main__`` guard would run its own
ingestion again in the child. ``python -m kg_platform.distilling.nlp_parser`` runs nothing of the
caller's; requests and replies are pickled over the child's stdin and stdout.

Why it cannot outlive its parent: a ``kill -9`` of ingestion must leave no process behind (the
fault suite kills it mid-step). Linux kills the child when its parent dies (``PR_SET_PDEATHSIG``);
on any system the child exits when its stdin closes, which happens when the parent dies, since no
other process holds that pipe.

Where a child cannot run (``distill.nlp_parse_process`` off, or the child failed to start or
died), :class:`NlpParser` parses in this process instead: slower, never wrong. The extraction is
the same pure function either way (:func:`~kg_platform.distilling.nlp.extract_texts`).
"""

from __future__ import annotations

import logging
import os
import pickle
import queue
import subprocess
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import IO, Any

from kg_platform.distilling.nlp import NlpExtraction, extract_texts, load_pipeline

log = logging.getLogger(__name__)

_PR_SET_PDEATHSIG = 1  # linux/prctl.h


@dataclass(frozen=True)
class ParseRequest:
    """One batch of chunks to parse: texts with their source ids (concepts recur per source)
    and source titles, the extraction's limits, and whether to parse for concepts and relations
    (``distill.relations``; off: NER alone)."""

    texts: Sequence[str]
    groups: Sequence[str]
    titles: Sequence[str | None]
    min_concept_mentions: int
    max_mentions: int
    relations: bool = True


def parse_request(nlp: Any, req: ParseRequest) -> list[NlpExtraction]:
    """The extraction of ``req`` with the loaded pipeline ``nlp`` (in either process)."""
    return extract_texts(
        nlp,
        list(req.texts),
        list(req.groups),
        titles=[t or "" for t in req.titles],
        min_concept_mentions=req.min_concept_mentions,
        max_mentions=req.max_mentions,
        relations=req.relations,
    )


class ChildGone(RuntimeError):
    """The parsing child exited or could not be reached; the request is parsed here instead."""


class NlpParser:
    """Parses :class:`ParseRequest` batches in order, in a child process when ``in_child`` (the
    default configuration), else in this process.

    :meth:`start` launches the child, which begins loading the pipeline at once; :meth:`submit`
    returns a future, so the caller can write one batch while the next is parsed, and
    :meth:`result` waits for it (parsing here when the child is gone). Use as a context manager,
    or call :meth:`close`. ``relations``: the pipeline the child loads ahead (with the parser,
    or NER alone); a request of the other kind loads the other pipeline."""

    def __init__(self, model: str, *, in_child: bool = True, relations: bool = True) -> None:
        self.model = model
        self.relations = relations
        self._want_child = in_child
        self._child: subprocess.Popen[bytes] | None = None
        self._requests: queue.Queue[tuple[ParseRequest, Future[list[NlpExtraction]]] | None] = (
            queue.Queue()
        )
        self._courier: threading.Thread | None = None

    @property
    def child_pid(self) -> int | None:
        """The child's process id (None when parsing in this process)."""
        return self._child.pid if self._child is not None else None

    def start(self) -> NlpParser:
        """Launch the child (returns at once); idempotent."""
        if not self._want_child or self._child is not None:
            return self
        try:
            self._child = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    __name__,
                    self.model,
                    str(os.getpid()),
                    "1" if self.relations else "0",
                ],
                # the child imports what this process imports, from where it does
                env={
                    **os.environ,
                    "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
                    # one core by design (this process keeps the other busy): numpy's BLAS,
                    # which the pipeline's layers use, would otherwise start a thread per core
                    "OPENBLAS_NUM_THREADS": "1",
                    "OMP_NUM_THREADS": "1",
                },
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                # the child's warnings reach the user's terminal and logs, as ours do
                stderr=None,
            )
        except OSError as exc:
            self._fall_back(exc)
            return self
        self._courier = threading.Thread(target=self._carry, name="kgp-nlp-parser", daemon=True)
        self._courier.start()
        return self

    def submit(self, req: ParseRequest) -> Future[list[NlpExtraction]]:
        """The extraction of ``req``: queued for the child, or parsed here (then already done)."""
        self.start()
        future: Future[list[NlpExtraction]] = Future()
        if self._child is not None:
            self._requests.put((req, future))
            return future
        try:
            future.set_result(self._parse_here(req))
        except Exception as exc:  # noqa: BLE001 - handed to the caller through the future
            future.set_exception(exc)
        return future

    def result(self, future: Future[list[NlpExtraction]], req: ParseRequest) -> list[NlpExtraction]:
        """``future``'s extraction; when the child died under it, ``req`` parsed here instead
        (a pipeline that cannot load raises its ``ConfigError`` here, with the install hint)."""
        try:
            return future.result()
        except ChildGone as exc:
            self._fall_back(exc)
            return self._parse_here(req)

    def _parse_here(self, req: ParseRequest) -> list[NlpExtraction]:
        return parse_request(load_pipeline(self.model, parse=req.relations), req)

    def close(self) -> None:
        """Stop the child: it exits when its stdin closes (a parse under way is abandoned)."""
        child, self._child = self._child, None
        if child is None:
            return
        self._requests.put(None)
        if child.stdin is not None:
            try:
                child.stdin.close()
            except OSError:  # the courier was writing to a child already gone
                pass
        try:
            child.wait(timeout=2)
        except subprocess.TimeoutExpired:  # mid-parse: its reply is not wanted any more
            child.kill()
            child.wait()
        if self._courier is not None:
            self._courier.join()
        if child.stdout is not None:
            child.stdout.close()

    def __enter__(self) -> NlpParser:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _carry(self) -> None:
        """The courier thread: send each request, wait for its reply, settle its future. One
        request at a time, so a pipe never fills with work the child has not started. Once the
        child is gone, every later request gets the same :class:`ChildGone`."""
        child = self._child
        assert child is not None
        gone: ChildGone | None = None
        while (item := self._requests.get()) is not None:
            req, future = item
            if gone is None:
                gone = _exchange(child, req, future)
            if gone is not None:
                future.set_exception(gone)

    def _fall_back(self, exc: BaseException) -> None:
        if self._want_child:
            log.warning("NLP parsing in a child process failed (%s); parsing in this process", exc)
        self._want_child = False
        self.close()


def _exchange(
    child: subprocess.Popen[bytes], req: ParseRequest, future: Future[list[NlpExtraction]]
) -> ChildGone | None:
    """Send ``req`` to ``child`` and settle ``future`` with its reply; the :class:`ChildGone`
    when the child is no longer usable (``future`` then left for the caller to settle)."""
    assert child.stdin is not None and child.stdout is not None
    try:
        pickle.dump(req, child.stdin, protocol=pickle.HIGHEST_PROTOCOL)
        child.stdin.flush()
        status, payload = pickle.load(child.stdout)
    except Exception as exc:  # noqa: BLE001 - a broken exchange leaves the pipe out of step
        # (a closed pipe, EOF, a half-written pickle): the child is done
        return ChildGone(f"the NLP parsing child (pid {child.pid}) is gone: {exc}")
    if status == "gone":  # the pipeline did not load: the child says why, then exits
        return ChildGone(str(payload))
    if status == "ok":
        future.set_result(payload)
    else:  # one bad batch; the child carries on
        future.set_exception(RuntimeError(str(payload)))
    return None


# --- in the child: python -m kg_platform.distilling.nlp_parser MODEL PARENT_PID ----------------


def _die_with_parent(parent_pid: int) -> None:
    """On Linux, have the kernel SIGKILL this process when its parent dies (even mid-parse); the
    closed stdin ends the read loop everywhere else."""
    import signal

    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):  # not Linux
        pass
    if os.getppid() != parent_pid:  # the parent died before the prctl took effect
        os._exit(1)


def _serve(model: str, requests: IO[bytes], replies: IO[bytes], parse: bool = True) -> None:
    """Load the pipeline (with the parser when ``parse``), then answer requests until stdin
    closes; a request of the other kind is answered with the other pipeline."""
    try:
        load_pipeline(model, parse=parse)
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which parses itself
        load_error: str | None = f"{type(exc).__name__}: {exc}"
    else:
        load_error = None
    while True:
        try:
            req = pickle.load(requests)
        except EOFError:
            return
        if load_error is not None:
            reply: tuple[str, Any] = ("gone", load_error)
        else:
            try:
                nlp = load_pipeline(model, parse=req.relations)
                reply = ("ok", parse_request(nlp, req))
            except Exception as exc:  # noqa: BLE001 - one bad batch, reported to the parent
                reply = ("error", f"{type(exc).__name__}: {exc}")
        pickle.dump(reply, replies, protocol=pickle.HIGHEST_PROTOCOL)
        replies.flush()
        if load_error is not None:
            return


def _main(argv: list[str]) -> None:
    model, parent_pid = argv[0], int(argv[1])
    parse = argv[2] != "0" if len(argv) > 2 else True
    _die_with_parent(parent_pid)
    # the protocol owns the pipe on stdout; anything a library prints goes to stderr instead
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    _serve(model, sys.stdin.buffer, replies, parse)


if __name__ == "__main__":
    _main(sys.argv[1:])


__all__ = ["ChildGone", "NlpParser", "ParseRequest", "parse_request"]
