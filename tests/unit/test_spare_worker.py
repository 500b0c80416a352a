"""``tests/support/spare_worker.py`` under a real ``pytest -n 2 --dist loadfile``: every module
that names the spare fixture runs in one worker, the others spread as loadfile spreads them, and
a test whose module reaches the spare without naming it fails with a message that says so. A
throwaway suite with a stand-in ``spare_neo4j_server`` fixture, no Neo4j."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.data import REPO

pytest.importorskip("xdist", reason="needs pytest-xdist (the dev extra)")

CONFTEST = """
import os
import pytest

pytest_plugins = ["tests.support.spare_worker"]


@pytest.fixture(scope="session")
def spare_neo4j_server():
    return "spare"


@pytest.fixture()
def spare_neo4j(spare_neo4j_server):
    return spare_neo4j_server


@pytest.fixture()
def indirect_spare(spare_neo4j_server):
    return spare_neo4j_server


@pytest.fixture()
def record(request):
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    out = request.config.rootpath / "ran" / f"{request.node.path.stem}.{worker}"
    out.parent.mkdir(exist_ok=True)
    out.touch()
"""

USES_SPARE = """
import time

def test_one(spare_neo4j, record):
    time.sleep(0.2)

def test_two(spare_neo4j, record):
    time.sleep(0.2)
"""

NO_SPARE = """
import time

def test_one(record):
    time.sleep(0.2)
"""


def _suite(root: Path, modules: dict[str, str]) -> None:
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["t"]\n')
    (root / "t").mkdir()
    (root / "t" / "conftest.py").write_text(CONFTEST)
    for name, text in modules.items():
        (root / "t" / f"{name}.py").write_text(text)


def _run(root: Path) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "loadfile"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_spare_modules_share_one_worker_and_the_rest_spread(tmp_path: Path) -> None:
    spare = [f"test_spare_{i}" for i in range(6)]
    plain = [f"test_plain_{i}" for i in range(6)]
    _suite(tmp_path, {**dict.fromkeys(spare, USES_SPARE), **dict.fromkeys(plain, NO_SPARE)})
    proc = _run(tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    worker_of: dict[str, set[str]] = {}
    for mark in (tmp_path / "ran").iterdir():
        module, worker = mark.name.split(".")
        worker_of.setdefault(module, set()).add(worker)
    assert set(worker_of) == set(spare) | set(plain)
    # without the plugin, loadfile would put six modules on one of two workers by chance 1 in 32
    assert len(set().union(*(worker_of[m] for m in spare))) == 1, worker_of
    assert len(set().union(*worker_of.values())) == 2, worker_of  # the others still spread


def test_a_module_reaching_the_spare_without_naming_it_is_an_error(tmp_path: Path) -> None:
    _suite(tmp_path, {"test_hidden": "def test_one(indirect_spare):\n    pass\n"})
    proc = _run(tmp_path)
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "uses the spare Neo4j server without naming a spare fixture" in out, out[-3000:]
    assert "t/test_hidden.py" in out
