"""lab/notebooks/evaluate.ipynb runs top to bottom against the session's Neo4j (small limit).

Executed with nbclient (what nbmake uses) so the kernel inherits the environment pointing at the
test server; the notebook itself is not rewritten.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

NOTEBOOK = Path(__file__).resolve().parents[2] / "lab" / "notebooks" / "evaluate.ipynb"


def test_evaluate_notebook_executes(settings, graph_session, monkeypatch, tmp_path):
    nbformat = pytest.importorskip("nbformat")
    from nbclient import NotebookClient

    corpus = "test-nb-eval"
    graph_session.write_raw(
        "MATCH (n) WHERE n.corpus = $c OR (n:Corpus AND n.name = $c) DETACH DELETE n", c=corpus
    )
    env = {
        "NEO4J_URI": settings.neo4j.uri,
        "NEO4J_PASSWORD": settings.neo4j.password.get_secret_value(),
        "KGP_DATA_DIR": str(settings.data_dir),
        "HF_HUB_OFFLINE": "1",
        "KGP_NOTEBOOK_LIMIT": "2",
        "KGP_NOTEBOOK_CORPUS_LIMIT": "2",
        "KGP_NOTEBOOK_CORPUS": corpus,
        "KGP_NOTEBOOK_PLOT": str(tmp_path / "nb.png"),
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},
    ).execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = " ".join(str(o.get("data", {}).get("text/markdown", "")) for o in outputs)
    assert "| bm25 |" in text and "| hybrid |" in text
    assert any("image/png" in o.get("data", {}) for o in outputs)
    assert (tmp_path / "nb.png").stat().st_size > 10_000
