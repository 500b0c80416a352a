"""Step 1, discover: files and folders to the candidates a run parses.

:func:`discover` walks the given paths; :func:`changed_files` checks each file's size (stat only,
so a 50 MB file is refused without being read), hashes it (streamed) and skips it when the hash
and the pipeline signature are unchanged; :func:`prune_keeper` is ``--prune``'s rule of what to
keep.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import NamedTuple, Protocol

from kg_platform._faults import fault_point
from kg_platform.errors import IngestionError, SourceTooLarge
from kg_platform.ingest.files import Candidate
from kg_platform.ingest.roots import PathGuard
from kg_platform.tuning import file_sha256

__all__ = [
    "Discovery",
    "RunLedger",
    "changed_files",
    "discover",
    "file_sha256",
    "prune_keeper",
]


class RunLedger(Protocol):
    """What :func:`changed_files` needs of the run (the runner): where to record what it meets."""

    def check_cancelled(self) -> None: ...

    def error(self, path: str, exc: BaseException) -> None: ...

    def is_unchanged(self, uri: str, sha256: str) -> bool: ...

    def skip(self, uri: str) -> None: ...


class Discovery(NamedTuple):
    """What a folder walk found: files to ingest, given paths that do not exist, and folders
    that could not be listed (with the reason), so none of them is skipped silently."""

    files: list[Path]
    missing: list[Path]
    unreadable: list[tuple[Path, str]]


def _matches(path: Path, root: Path, patterns: Sequence[str]) -> bool:
    rel = path.relative_to(root).as_posix() if path != root else path.name
    return any(fnmatch.fnmatch(path.name, p) or fnmatch.fnmatch(rel, p) for p in patterns)


def discover(
    paths: Iterable[str | Path],
    include: Sequence[str] | None = None,
    exclude: Sequence[str] | None = None,
    guard: PathGuard | None = None,
    checkpoint: Callable[[], None] | None = None,
) -> Discovery:
    """Walk ``paths``. Folders are walked recursively in name order; hidden files and folders
    are skipped; ``include``/``exclude`` are globs matched against the file name and the path
    relative to the folder given. A folder that cannot be listed is returned in ``unreadable``
    (``os.walk`` would otherwise skip it without a word).

    With a ``guard`` (a server's ingest roots), a given path it does not allow is returned in
    ``missing`` as it was given (like one that does not exist), and a file or folder of the
    walk it does not allow (a link leading out of the roots, ``data_dir``) is skipped.

    ``checkpoint`` is called before each folder is listed (the run's cancel check): whatever it
    raises stops the walk, so a run over a large tree can be cancelled while it is still listing
    files."""
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
                fault_point("walk")
                if checkpoint is not None:
                    checkpoint()
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


def prune_keeper(unreadable: Sequence[Path]) -> Callable[[str], bool]:
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


def changed_files(session: RunLedger, files: Sequence[Path], limit: int) -> Iterator[Candidate]:
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
