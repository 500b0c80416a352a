"""``ingest_paths``: files and folders into a corpus, incrementally and idempotently.

The run is recorded first, then the given paths are walked (cancellable, like the rest). Order of
work per file: size check (stat only, so a 50 MB file is refused without being read),
sha256 (streamed), skip when the hash and the pipeline signature are unchanged, parse, plan, and
queue for the grouped embed + write. After all files: ``--prune``, then the piece-graph sync, then
the run record.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path

from kg_platform.config import Settings
from kg_platform.embedding.base import Embedder
from kg_platform.errors import IngestionError
from kg_platform.graph.client import GraphClient
from kg_platform.ingest.files import Parser, default_parser, parser_version
from kg_platform.ingest.report import IngestReport
from kg_platform.ingest.roots import PathGuard
from kg_platform.ingest.runs import RunCancelled
from kg_platform.ingest.runner import IngestRunner, Progress
from kg_platform.ingest.steps.discover import (
    Discovery,
    changed_files,
    discover,
    file_sha256,
    prune_keeper,
)
from kg_platform.ingest.steps.parse import document_input, read_document

log = logging.getLogger(__name__)

__all__ = ["Discovery", "Parser", "discover", "file_sha256", "ingest_paths"]


def ingest_paths(
    graph: GraphClient,
    settings: Settings,
    paths: Sequence[str | Path],
    corpus: str,
    include: Sequence[str] | None = None,
    exclude: Sequence[str] | None = None,
    prune: bool = False,
    progress: Progress | None = None,
    *,
    embedder: Embedder | None = None,
    parser: Parser | None = None,
    guard: PathGuard | None = None,
) -> IngestReport:
    """Ingest files and folders into ``corpus``; see the module docstring for the order of work.

    Returns the run's :class:`IngestReport` (status ``completed``, ``completed_with_errors``,
    ``failed``, or ``cancelled`` when :func:`kg_platform.ingest.runs.request_cancel` asked it
    to stop: checked before each file); bad inputs are listed in ``report.errors`` and never
    stop the batch. ``guard`` (a server's ingest roots) limits what the walk may read.
    """
    parse = parser or default_parser()
    session = IngestRunner(
        graph,
        settings,
        corpus,
        embedder=embedder,
        progress=progress,
        paths=[str(p) for p in paths],
        parser_version=parser_version(parser),
    )
    try:
        # The run is recorded before the walk: a server's request gets the run's id at once
        # (not after listing a large tree), and the walk checks for a cancel as it goes.
        session.emit(event="listing", run_id=session.run_id)
        files, missing, unreadable = discover(
            paths, include, exclude, guard, checkpoint=session.check_cancelled
        )
        session.emit(event="start", total=len(files), run_id=session.run_id)
        for path in missing:
            session.error(
                str(path),
                IngestionError(
                    f"{path}: no such file or folder under the ingest roots",
                    hint="name a file or folder inside serve.ingest_roots (relative paths are "
                    "taken relative to the first root)",
                )
                if guard is not None
                else IngestionError(
                    f"{path} does not exist",
                    hint="check the path (relative paths are resolved "
                    "against the working directory)",
                ),
            )
        for folder, reason in unreadable:
            session.error(
                str(folder),
                IngestionError(
                    f"cannot list folder {folder}: {reason}; its files were not ingested",
                    hint="give this user read and execute permission on the folder, or exclude it",
                ),
            )
        changed = changed_files(session, files, settings.ingest.max_file_bytes)
        if settings.ingest.engine == "ray":
            from kg_platform.ingest.ray_engine import prepare_on_ray

            prepare_on_ray(session, changed, parser)
        else:
            for candidate in changed:
                started = time.perf_counter()
                try:
                    doc = read_document(candidate, parse)
                except Exception as exc:  # noqa: BLE001 - reported; the batch goes on
                    session.error(candidate.uri, exc)
                    continue
                finally:
                    session.timings["parse"] += time.perf_counter() - started
                session.warn(candidate.uri, doc.warnings)
                session.add(document_input(doc, corpus, session.pipeline), display=candidate.uri)
        session.flush()
        if prune:
            session.prune(prune_keeper([folder for folder, _ in unreadable]))
    except BaseException as exc:  # noqa: BLE001 - recorded as a failed run (re-raised if ^C)
        if isinstance(exc, RunCancelled):
            log.info("ingestion run %s cancelled", session.run_id)
        else:
            log.error("ingestion run %s failed: %s", session.run_id, exc)
        return session.finish(exc)
    return session.finish()
