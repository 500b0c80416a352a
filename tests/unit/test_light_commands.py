"""`kgp --help` and `kgp neo4j status` stay light: no torch, ONNX Runtime or openai imported.

Each command runs in a fresh interpreter (a module imported by an earlier test would hide a heavy
import), and the child reports what ``sys.modules`` holds after the command finished.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = (
    "torch",
    "onnxruntime",
    "openai",
    "sentence_transformers",
    "transformers",
    "fitz",
    "pymupdf",
    "onnx",
    "neo4j",
    "numpy",
)

CHILD = """
import json, sys
args, watched = json.loads(sys.argv[1]), json.loads(sys.argv[2])
from kg_platform.cli.main import main
sys.argv = ["kgp", *args]
try:
    main()
except SystemExit:
    pass
heavy = [m for m in watched if m in sys.modules]
sys.stderr.write("HEAVY=" + json.dumps(heavy) + "\\n")
"""


@pytest.mark.parametrize(
    "argv", [["--help"], ["neo4j", "status"], ["retrieve", "--help"], ["ingest", "--help"]]
)
def test_command_imports_no_heavy_library(argv: list[str], tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("KGP_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("NEO4J_URI", raising=False)
    out = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(argv), json.dumps(HEAVY)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    line = [x for x in out.stderr.splitlines() if x.startswith("HEAVY=")]
    assert line, out.stderr[-2000:]
    assert json.loads(line[-1][len("HEAVY=") :]) == [], f"`kgp {' '.join(argv)}` imported them"


def test_help_does_not_even_load_the_settings(tmp_path, monkeypatch) -> None:
    """Listing the commands needs typer only: settings and the server manager load on use."""
    monkeypatch.setenv("KGP_DATA_DIR", str(tmp_path))
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            CHILD,
            json.dumps(["--help"]),
            json.dumps(["pydantic_settings", "kg_platform.config", "kg_platform.neo4j_server"]),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    line = [x for x in out.stderr.splitlines() if x.startswith("HEAVY=")]
    assert line and json.loads(line[-1][len("HEAVY=") :]) == [], out.stderr[-2000:]


def test_the_read_path_imports_neither_scipy_nor_the_ingestion_pipeline() -> None:
    """What `kgp retrieve` imports on its way to an answer (the SDK's search, the late rerank,
    closing dead runs) leaves SciPy and the ingestion pipeline unloaded: together ~0.25 s of CPU
    at every start of a command that only reads."""
    child = (
        "import json, sys\n"
        "import kg_platform.sdk.platform, kg_platform.retrieval.pipeline\n"
        "import kg_platform.retrieval.rerank.late_interaction, kg_platform.ingest.runs\n"
        "from kg_platform.ingest import IngestReport\n"
        "print(json.dumps([m for m in ('scipy', 'kg_platform.ingest.pipeline') "
        "if m in sys.modules]))\n"
    )
    out = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
    # and the lazy name still resolves for callers that use it
    from kg_platform.ingest import ingest_paths
    from kg_platform.ingest.pipeline import ingest_paths as direct

    assert ingest_paths is direct
