"""Tests reach the shared bench data one way: ``tests/support/data.py``, which honours
``KGP_SHARED_DIR``. A test that builds its own ``.../shared/...`` path would pass beside the
clone and fail wherever the data lives elsewhere, so this check fails on one."""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
ONE_PLACE = TESTS / "support" / "data.py"
#: a path built towards the shared folder: "shared" as a path part, or a parent-walk out of the repo
OWN_SHARED_PATH = re.compile(r"""["']shared["']|["']\.\./shared|/\s*["']shared/""")


def test_only_the_data_module_builds_shared_paths() -> None:
    offenders = [
        f"{path.relative_to(TESTS)}:{n}"
        for path in sorted(TESTS.rglob("*.py"))
        if path not in (ONE_PLACE, Path(__file__).resolve())
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if OWN_SHARED_PATH.search(line)
    ]
    assert offenders == [], "use tests.support.data (SHARED, BENCH, DEV, DOCUMENTS): " + ", ".join(
        offenders
    )


def test_the_pattern_finds_a_hand_built_path() -> None:
    assert OWN_SHARED_PATH.search('p = REPO.parent / "shared" / "bench"')
    assert not OWN_SHARED_PATH.search('p = BENCH / "dev" / "hotpotqa.jsonl"')
