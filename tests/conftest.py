"""Names the tests import from here (the fixtures and hooks are in ``tests/support/fixtures.py``,
loaded by the repository's root ``conftest.py``)."""

from __future__ import annotations

from tests.support.data import BENCH, DEV, DOCUMENTS, REPO, SHARED  # noqa: F401 (re-exported)
from tests.support.fixtures import _wipe  # noqa: F401 (re-exported)
