"""``ingest_paths``: files and folders into a corpus, incrementally and idempotently.

Order of work per file: size check (stat only, so a 50 MB file is refused without being read),
sha256 (streamed), skip when the hash and the pipeline signature are unchanged, parse, plan, and
queue for the grouped embed + write. After all files: ``--prune``, then the piece-graph sync, then
the run record.
"""

from __future__ import annotations

import fnmatch
import hashlib
import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from kg_platform.config import Settings
from kg_platform.embedding.base import Embedder
from kg_platform.errors import IngestionError, SourceTooLarge
from kg_platform.graph.client import GraphClient
from kg_platform.ingest.files import (
    Candidate,
    Parser,
    default_parser,
    parser_version,
    read_document,
)
from kg_platform.ingest.plan import document_input
from kg_platform.ingest.report import IngestReport
from kg_platform.ingest.roots import PathGuard
from kg_platform.ingest.runs import RunCancelled
from kg_platform.ingest.session import IngestSession, Progress

log = logging.getLogger(__name__)

__all__ = ["Discovery", "Parser", "discover", "file_sha256", "ingest_paths"]


class Discovery(NamedTuple):
    """What a folder walk found: files to ingest, given paths that do not exist, and folders
    that could not be listed (with the reason), so none of them is skipped silently."""

    files: list[Path]
    missing: list[Path]
    unreadable: list[tuple[Path, str]]


def file_sha256(path: Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(chunk), b""):
            digest.update(block)
    return digest.hexdigest()


def _matches(path: Path, root: Path, patterns: Sequence[str]) -> bool:
    rel = path.relative_to(root).as_posix() if path != root else path.name
    return any(fnmatch.fnmatch(path.name, p) or fnmatch.fnmatch(rel, p) for p in patterns)


def discover(
    paths: Iterable[str | Path],
    include: Sequence[str] | None = None,
    exclude: Sequence[str] | None = None,
    guard: PathGuard | None = None,
) -> Discovery:
    """Walk ``paths``. Folders are walked recursively in name order; hidden files and folders
    are skipped; ``include``/``exclude`` are globs matched against the file name and the path
    relative to the folder given. A folder that cannot be listed is returned in ``unreadable``
    (``os.walk`` would otherwise skip it without a word).

    With a ``guard`` (a server's ingest roots), a given path it does not allow is returned in
    ``missing`` as it was given (like one that does not exist), and a file or folder of the
    walk it does not allow (a link leading out of the roots, ``data_dir``) is skipped."""
    files: list[Path] = []
    missing: list[Path] = []
    unreadable: list[tuple[Path, str]] = []
    seen: set[Path] = set()

    def walk_error(exc: OSError) -> None:
        unreadable.append((Path(exc.filename or "?"), exc.strerror or str(exc)))

    for raw in paths:
        if guard is not None:
            allowed = guard.resolve(raw)
            if allowed is None:
                missing.append(Path(raw))
                continue
            root = allowed
        else:
            root = Path(raw).expanduser().resolve()
        if not root.exists():
            missing.append(root)
            continue
        if root.is_file():
            candidates = [root]
            base = root.parent
        else:
            candidates = []
            for dirpath, dirnames, filenames in os.walk(root, onerror=walk_error):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                if guard is not None:
                    dirnames[:] = [d for d in dirnames if guard.allows(Path(dirpath) / d)]
                candidates.extend(
                    Path(dirpath) / f for f in sorted(filenames) if not f.startswith(".")
                )
            base = root
        for path in candidates:
            if include and not _matches(path, base, include):
                continue
            if exclude and _matches(path, base, exclude):
                continue
            if guard is not None and not guard.allows(path):
                continue
            if path not in seen:
                seen.add(path)
                files.append(path)
    return Discovery(files, missing, unreadable)


def _keeper(unreadable: Sequence[Path]) -> Callable[[str], bool]:
    """The ``--prune`` rule: keep URLs, files that exist, and anything we could not check.

    A file under a folder that could not be listed, or whose existence cannot be checked
    (permission denied), is kept: pruning must only delete what is known to be gone.
    """

    def keep(uri: str) -> bool:
        if "://" in uri:
            return True
        path = Path(uri)
        if any(path.is_relative_to(folder) for folder in unreadable):
            return True
        try:
            path.stat()
        except FileNotFoundError:
            return False
        except OSError:
            return True
        return True

    return keep


def _changed_files(
    session: IngestSession, files: Sequence[Path], limit: int
) -> Iterator[Candidate]:
    """Size check (stat only, so a huge file is refused unread), sha256, skip-by-hash; what is
    left is yielded. Errors are recorded on the session as they are met."""
    for path in files:
        session.check_cancelled()
        uri = str(path)
        try:
            size = path.stat().st_size
            if size > limit:
                raise SourceTooLarge(
                    f"{path.name} is {size} bytes, over the {limit}-byte limit",
                    hint="raise KGP_INGEST__MAX_FILE_BYTES, or split the file",
                )
            sha = file_sha256(path)
        except SourceTooLarge as exc:
            session.error(uri, exc)
            continue
        except OSError as exc:
            session.error(
                uri,
                IngestionError(f"cannot read {path}: {exc}", hint="check the file's permissions"),
            )
            continue
        if session.is_unchanged(uri, sha):
            session.skip(uri)
            continue
        yield Candidate(path, uri, sha, size)


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
    files, missing, unreadable = discover(paths, include, exclude, guard)
    session = IngestSession(
        graph,
        settings,
        corpus,
        embedder=embedder,
        progress=progress,
        paths=[str(p) for p in paths],
        parser_version=parser_version(parser),
    )
    try:
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
        changed = _changed_files(session, files, settings.ingest.max_file_bytes)
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
            session.prune(_keeper([folder for folder, _ in unreadable]))
    except BaseException as exc:  # noqa: BLE001 - recorded as a failed run (re-raised if ^C)
        if isinstance(exc, RunCancelled):
            log.info("ingestion run %s cancelled", session.run_id)
        else:
            log.error("ingestion run %s failed: %s", session.run_id, exc)
        return session.finish(exc)
    return session.finish()
