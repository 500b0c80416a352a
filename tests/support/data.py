"""Where the tests find the workplace's shared data (bench datasets, parser test documents).

The one place that decides it: next to the clone (``<repo>/../shared``), or wherever
``KGP_SHARED_DIR`` says. Every test takes these paths from here (``tests/conftest.py`` re-exports
them), and ``tests/unit/test_test_data_paths.py`` fails if a test builds its own.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("KGP_SHARED_DIR") or REPO.parent / "shared")
BENCH = SHARED / "bench"
DEV = BENCH / "dev"
DOCUMENTS = BENCH / "documents"
