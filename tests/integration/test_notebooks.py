"""The notebooks run top to bottom against the session's real Neo4j (the connection reaches the
kernel through NEO4J_URI / NEO4J_PASSWORD), within a time limit, so they never rot."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

pytestmark = pytest.mark.integration

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
# name -> (extra kernel environment, whole-notebook time limit in seconds)
TOURS = {
    "01_tour.ipynb": ({"KGP_TOUR_CORPUS": "nb-tour", "KGP_TOUR_INCLUDE": "*.md"}, 420),
}


# ~140 s on the shared 2-core machine (model load + ingestion in the kernel): `slow`, but it
# still runs in `make test` (only `make test-fast` leaves it out).
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(TOURS))
def test_notebook_runs(name, neo4j_server, graph_session, monkeypatch) -> None:
    env, limit = TOURS[name]
    monkeypatch.setenv("NEO4J_URI", neo4j_server["uri"])
    monkeypatch.setenv("NEO4J_PASSWORD", neo4j_server["password"])
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for key in ("KGP_LLM__BASE_URL", "KGP_LLM__MODEL", "KGP_CONFIG"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=limit, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}
    )
    started = time.monotonic()
    client.execute()  # raises CellExecutionError on the first failing cell
    elapsed = time.monotonic() - started
    assert elapsed < limit, f"{name} took {elapsed:.0f}s"
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = "\n".join(
        str(o.get("text", "")) + str(o.get("data", {}).get("text/plain", "")) for o in outputs
    )
    assert "schema version" in text and "answer id for Neo4j Browser" in text
    assert any("image/png" in o.get("data", {}) for o in outputs), "the graph picture is missing"
