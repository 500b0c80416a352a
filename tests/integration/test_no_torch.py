"""A default install (no ``train`` extra) ingests and retrieves: torch is never imported.

The child process installs an import hook that makes ``import torch`` (and the libraries that
wrap it) fail, then runs ingestion with the SAGE segmenter and retrieval with several strategies
against the session's real Neo4j. Any code path that still needs torch fails this test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

_CHILD = textwrap.dedent("""
    import json, sys

    BLOCKED = ("torch", "sentence_transformers", "transformers")

    class BlockTorch:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ImportError(f"{name} is blocked: this process simulates an install without torch")

    sys.meta_path.insert(0, BlockTorch())

    from kg_platform.sdk import KnowledgePlatform

    docs, corpus = sys.argv[1], sys.argv[2]
    with KnowledgePlatform.from_env() as kp:
        kp.init_schema()
        report = kp.ingest([docs], corpus)
        out = {"errors": [str(e) for e in report.errors], "counts": report.counts,
               "embedder": type(kp.embedder).__name__}
        for strategy in ("vector", "hybrid", "mog", "mogg", "propagate"):
            items = kp.retrieve("Which river flows through the old harbour town?", strategy=strategy,
                                k=3, corpus=corpus)
            out[strategy] = [item.text for item in items]
            out[strategy + "_breakdown"] = items[0].breakdown if items else {}
    out["torch_loaded"] = [m for m in sys.modules if m.split(".")[0] in BLOCKED]
    print(json.dumps(out))
""")


def test_ingest_and_retrieve_without_torch(neo4j_server: dict, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "harbour.md").write_text(
        "# Harbour towns\n\n"
        "The river Alde flows through the old harbour town of Orford before it reaches the sea. "
        "Fishing boats still land their catch on the quay every morning.\n\n"
        "## Castle\n\n"
        "Orford Castle was built by King Henry II in the twelfth century. Its keep has an unusual "
        "polygonal plan that puzzles historians to this day.\n",
        encoding="utf-8",
    )
    (docs / "bakery.md").write_text(
        "# Bread\n\nSourdough rises slowly because wild yeast ferments the dough for many hours. "
        "Bakers keep a starter alive by feeding it flour and water every day.\n",
        encoding="utf-8",
    )
    script = tmp_path / "child.py"
    script.write_text(_CHILD, encoding="utf-8")
    env = {
        **os.environ,
        "NEO4J_URI": neo4j_server["uri"],
        "NEO4J_PASSWORD": neo4j_server["password"],
        "KGP_DATA_DIR": str(tmp_path / "data"),
        "KGP_SEGMENT__SEGMENTER": "sage",
    }
    proc = subprocess.run(
        [sys.executable, str(script), str(docs), "no-torch"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["torch_loaded"] == []
    assert out["embedder"] == "OnnxEmbedder"
    assert out["errors"] == [] and out["counts"].get("pieces", 0) > 0, out
    for strategy in ("vector", "hybrid", "mog", "mogg", "propagate"):
        assert out[strategy], f"{strategy} returned nothing"
    for strategy in ("mog", "mogg"):  # the shipped default routers, read with numpy
        assert out[strategy + "_breakdown"].get("default_router") == 1.0, out
    assert "Alde" in out["vector"][0] or "Alde" in out["hybrid"][0], out
