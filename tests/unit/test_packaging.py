"""The product's wheel holds the product only: no lab module, its data files present.

The lab (``lab/``, distribution ``kg-platform-lab``) ships separately; a user who installs
``kg-platform`` gets no evaluation, benchmark or training code.
"""

from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_product_wheel_has_no_lab_module(product_wheel: Path) -> None:
    wheel = product_wheel
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/", 1)[0] for n in names if not n.startswith("kg_platform-")}
    assert tops == {"kg_platform"}, tops
    assert not [n for n in names if "/lab/" in n or n.startswith("kg_platform_lab")]
    # what the product reads at run time travels with it: every tracked Cypher and model file
    data = subprocess.run(
        ["git", "ls-files", "kg_platform/cypher", "kg_platform/models"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert any(n.startswith("kg_platform/models/routers/") for n in data)
    assert any(n.endswith(".cypher") for n in data)
    assert [n for n in data if n not in set(names)] == []
    assert not any(
        n.endswith("entry_points.txt") and b"kg_platform_lab" in zipfile.ZipFile(wheel).read(n)
        for n in names
    )
