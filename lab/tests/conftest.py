"""The lab's tests (kg-platform-lab): collected only where the lab is installed.

The product's own suite (``tests/``) runs without the lab; ``tests/unit/test_layering.py``
proves it imports and registers nothing from it, and that this folder collects nothing then.
The shared fixtures (the session's Neo4j, ``clean_graph``...) come from
``tests/support/fixtures.py`` through the repository's root ``conftest.py``.

The lab's settings read the bench data from the shared folder the product's tests use
(``KGP_LAB__BENCH_DIR``, unless the environment already names one).
"""

from __future__ import annotations

import os

from tests.support.data import BENCH

os.environ.setdefault("KGP_LAB__BENCH_DIR", str(BENCH))

try:
    import kg_platform_lab  # noqa: F401
except ImportError:
    collect_ignore_glob = ["test_*.py"]
