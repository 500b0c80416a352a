"""Ingest roots: the folders an ingestion started by a server may read (``serve.ingest_roots``).

Why: ``POST /v1/ingest`` names files on the server's machine; without a limit any key holder
reads whatever the server's user can read (the Neo4j password and the API key in ``data_dir``
included). A :class:`PathGuard` answers, for one path, whether its *real* location (every link
followed, ``..`` collapsed) lies inside a root and outside ``data_dir`` and ``cache_dir``. The
server checks each given path with it before it starts a run, and the run's folder walk
(:func:`kg_platform.ingest.pipeline.discover`) checks every file it finds with the same guard,
so a link inside a root that leads out of it is skipped, and a path swapped for a link between
the request and the run is refused by the run itself. ``kgp ingest`` and the SDK pass no guard:
a local user reads what their own account can read.

Relative paths are taken relative to the first root (never to the server's working
directory). A path that does not exist and one that is not allowed get the same answer
(:meth:`PathGuard.resolve` returns ``None`` for both), so the API tells nobody what exists
outside the roots.

Not covered: hard links (a hard link inside a root to a file outside it is the same file; only
someone who can already write inside the root and owns or can read the target can make one),
and a path component swapped for a link after the walk checked it and before the file is read
(again only by someone who can write inside the root).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["PathGuard"]


def _real(path: str | Path, *, strict: bool = False) -> Path:
    return Path(os.path.realpath(os.fspath(path), strict=strict))


class PathGuard:
    """Which paths an ingestion may read: inside one of ``roots``, outside every ``refused``
    folder, both compared by real location."""

    def __init__(self, roots: Sequence[str | Path], refused: Sequence[str | Path] = ()) -> None:
        self.given_roots = tuple(Path(r) for r in roots)
        self.roots = tuple(_real(r) for r in roots)
        self.refused = tuple(_real(r) for r in refused)

    @classmethod
    def from_settings(cls, settings: Any) -> PathGuard:
        """The server's guard: ``serve.ingest_roots``, refusing ``data_dir`` and ``cache_dir``."""
        return cls(list(settings.serve.ingest_roots), [settings.data_dir, settings.cache_dir])

    def __bool__(self) -> bool:
        return bool(self.roots)

    def allows(self, path: str | Path) -> bool:
        """Whether ``path`` exists and its real location is inside a root and not refused."""
        try:
            real = _real(path, strict=True)
        except (OSError, RuntimeError):  # missing, unreadable, or a link loop
            return False
        return self._inside(real)

    def _inside(self, real: Path) -> bool:
        if any(real == r or real.is_relative_to(r) for r in self.refused):
            return False
        return any(real.is_relative_to(root) for root in self.roots)

    def resolve(self, given: str | Path) -> Path | None:
        """The real location of ``given`` (relative: to the first root) when it exists and is
        allowed; ``None`` when it is missing or not allowed, alike."""
        if not self.roots or not str(given).strip():
            return None  # no roots; or "" (which would name the whole first root)
        path = Path(given)
        if not path.is_absolute():
            path = self.given_roots[0] / path
        try:
            real = _real(path, strict=True)
        except (OSError, RuntimeError):
            return None
        return real if self._inside(real) else None

    def relative(self, path: str) -> str | None:
        """``path`` relative to the root it lies under (as configured or as resolved), or
        ``None`` when it is under none."""
        candidates = sorted(
            {str(r) for r in (*self.given_roots, *self.roots)}, key=len, reverse=True
        )
        for root in candidates:
            if path == root:
                return "."
            prefix = root.rstrip("/") + "/"
            if path.startswith(prefix):
                return path[len(prefix) :]
        return None
