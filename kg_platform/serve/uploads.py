"""Files uploaded to ``kgp serve``: where they are kept, the per-corpus quota, and their cleanup.

One folder per corpus, ``data_dir/serve/uploads/<corpus key>`` (:func:`upload_folder`, the one
place that rule lives: the SDK's ``drop_corpus`` removes it too), so a file uploaded again under
the same name is the same source (skipped when unchanged, else replaced). The folder holds only
files whose source is in the graph: when a run ends, every file it was given that did not land
(refused, corrupt, or not reached because the run failed or was cancelled) is deleted, unless
a later upload has replaced it meanwhile. An upload that would take the corpus's folder over
``serve.upload_quota_bytes`` is refused whole (413) and none of its files is kept.

Imports no web framework: the SDK reaches :func:`remove_upload_folder` without the serve extra.
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kg_platform.serve.problems import Problem
from kg_platform.upload_folders import remove_upload_folder, upload_folder, uploads_root

__all__ = [
    "MAX_NAME_BYTES",
    "StoredUpload",
    "UploadStore",
    "clean_after_run",
    "remove_upload_folder",
    "upload_folder",
    "upload_name",
    "uploads_root",
]

log = logging.getLogger(__name__)

#: the longest file name (in bytes of UTF-8) common file systems store
MAX_NAME_BYTES = 255
_TEMP_PREFIX = ".upload-"


def upload_name(filename: str) -> str:
    """The name an uploaded file is kept under (its last path part); raises a 422
    :class:`~kg_platform.serve.problems.Problem` for a name that cannot be kept or would not
    be ingested."""
    name = Path((filename or "").replace("\\", "/")).name.replace("\x00", "")
    if name in ("", ".", ".."):
        raise Problem(422, f"unusable upload file name {filename!r}", hint="name the file")
    size = len(name.encode("utf-8", "surrogateescape"))
    if size > MAX_NAME_BYTES:
        raise Problem(
            422,
            f"the upload file name is {size} bytes long, over the {MAX_NAME_BYTES}-byte limit "
            "of file names",
            hint=f"rename the file to at most {MAX_NAME_BYTES} bytes (UTF-8)",
        )
    if name.startswith("."):
        raise Problem(
            422,
            f"the upload file name {name[:80]!r} starts with '.': hidden files are not ingested",
            hint="rename the file",
        )
    return name


@dataclass(frozen=True)
class StoredUpload:
    """One file an upload stored, and the identity of the file stored (so a cleanup never
    deletes a file a later upload put under the same name)."""

    path: Path
    device: int
    inode: int


class UploadStore:
    """Stores uploads under :func:`upload_folder`, one request at a time per corpus (so the
    quota holds for concurrent uploads of one server)."""

    def __init__(self, settings: Any) -> None:
        self.settings = settings
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def _lock(self, corpus: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(corpus, threading.Lock())

    def usage(self, corpus: str) -> int:
        """Bytes kept in ``corpus``'s upload folder."""
        return sum(_kept_sizes(upload_folder(self.settings, corpus)).values())

    def store(
        self, corpus: str, files: Sequence[tuple[str, Callable[[], bytes]]]
    ) -> list[StoredUpload]:
        """Write every ``(file name, read)`` (``read`` returns the next block, b"" at the end)
        into the corpus's folder, each atomically (a reader never sees half a file), all or
        none: a name that cannot be kept (422) or a total over the quota (413) stores nothing."""
        names = [upload_name(filename) for filename, _ in files]
        quota = int(self.settings.serve.upload_quota_bytes)
        with self._lock(corpus):
            folder = upload_folder(self.settings, corpus)
            folder.mkdir(parents=True, exist_ok=True)
            kept = _kept_sizes(folder)
            total = sum(size for name, size in kept.items() if name not in set(names))
            staged: list[tuple[str, str]] = []
            try:
                for name, (_, read) in zip(names, files, strict=True):
                    fd, tmp = tempfile.mkstemp(dir=folder, prefix=_TEMP_PREFIX)
                    staged.append((tmp, name))
                    with os.fdopen(fd, "wb") as out:
                        while block := read():
                            total += len(block)
                            if total > quota:
                                raise Problem(
                                    413,
                                    f"this upload would take corpus {corpus!r}'s uploaded files "
                                    f"over the {quota}-byte quota (serve.upload_quota_bytes); "
                                    "nothing was stored",
                                    hint="drop the corpus or upload fewer bytes, or raise "
                                    "KGP_SERVE__UPLOAD_QUOTA_BYTES",
                                )
                            out.write(block)
                stored = []
                for tmp, name in staged:
                    target = folder / name
                    os.replace(tmp, target)
                    st = target.stat()
                    stored.append(StoredUpload(target, st.st_dev, st.st_ino))
                staged = []
                return stored
            finally:
                for tmp, _ in staged:
                    Path(tmp).unlink(missing_ok=True)


def _kept_sizes(folder: Path) -> dict[str, int]:
    sizes: dict[str, int] = {}
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return sizes
    for entry in entries:
        try:
            if entry.is_file(follow_symlinks=False):
                sizes[entry.name] = entry.stat(follow_symlinks=False).st_size
        except OSError:
            continue
    return sizes


def clean_after_run(stored: Iterable[StoredUpload], landed: Iterable[str]) -> list[Path]:
    """Delete each of ``stored`` whose path is not among ``landed`` (the run's added, replaced
    and unchanged source URIs) and is still the file that upload stored; return the deleted."""
    kept = {os.path.realpath(u) for u in landed}
    deleted: list[Path] = []
    for up in stored:
        if os.path.realpath(up.path) in kept:
            continue
        try:
            st = up.path.stat()
        except FileNotFoundError:
            continue
        if (st.st_dev, st.st_ino) != (up.device, up.inode):
            continue  # a later upload replaced it: that one is its own run's business
        try:
            up.path.unlink()
            deleted.append(up.path)
        except FileNotFoundError:
            continue
    return deleted
