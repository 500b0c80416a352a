"""The lab's tests (kg-platform-lab): collected only where the lab is installed.

The product's own suite (everything under ``tests/`` but this folder) runs without the lab;
``tests/unit/test_layering.py`` proves it imports and registers nothing from it.

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
