"""The ``kgp`` process imports the neo4j driver without the driver's optional pandas support.

Why: when pandas is installed, ``import neo4j`` imports it too (``neo4j._optional_deps``, for
``Result.to_df()`` and for packing pandas values as query parameters), which costs every ``kgp``
command that talks to Neo4j about as much CPU as importing the driver itself (the lab record's
``2026-11-28/question-keys/``). The CLI uses neither. So for the ``kgp`` process only, pandas is
reported missing to that one module while it is being imported; afterwards pandas imports
normally for anyone, and the SDK (a library in someone else's process) never does this.
"""

from __future__ import annotations

import importlib.abc
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

#: the driver module that imports pandas if it can
DRIVER_OPTIONAL_DEPS = "neo4j._optional_deps"
HIDDEN = ("pandas",)


class _HideFromDriver(importlib.abc.MetaPathFinder):
    """Refuses :data:`HIDDEN` while :data:`DRIVER_OPTIONAL_DEPS` is still running (it sets
    ``__all__`` on its last line), and removes itself once it has run."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> ModuleSpec | None:
        module = sys.modules.get(DRIVER_OPTIONAL_DEPS)
        if module is not None and hasattr(module, "__all__"):
            uninstall()
            return None
        if fullname in HIDDEN and module is not None:
            raise ModuleNotFoundError(
                f"{fullname} is not offered to the neo4j driver", name=fullname
            )
        return None


_finder = _HideFromDriver()


def install() -> None:
    """Hide :data:`HIDDEN` from the driver's import, unless the driver or pandas is already
    imported (then there is nothing to save, and nothing is changed)."""
    if DRIVER_OPTIONAL_DEPS in sys.modules or any(name in sys.modules for name in HIDDEN):
        return
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)


def uninstall() -> None:
    if _finder in sys.meta_path:
        sys.meta_path.remove(_finder)


__all__ = ["install", "uninstall"]
