"""F1: two ingests into one corpus at once must leave the SIMILAR edge set a rebuild from scratch
gives, and the corpus must not be marked clean while edges are missing. Before the fix the sync
deleted edges outside its snapshot and marked the corpus clean unconditionally, so the edges of
the source that landed in that window were lost for good."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from kg_platform.ingest.writer import drop_corpus
from tests.conftest import DOCUMENTS
from tests.faults.helpers import (
    KGP,
    assert_same_edges,
    duplicate_sources,
    kgp_env,
    stored_and_rebuilt_edges,
)

pytestmark = [pytest.mark.faults, pytest.mark.integration]

HALF_A = ["md/docling-wiki-ibm.md", "md/pdfplumber-README.md"]
HALF_B = ["md/markitdown-README.md", "html"]


def test_concurrent_ingests_keep_every_similar_edge(graph_session, settings, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for folder, rels in ((a, HALF_A), (b, HALF_B)):
        folder.mkdir()
        for rel in rels:
            src = DOCUMENTS / rel
            for f in [src] if src.is_file() else sorted(src.iterdir()):
                shutil.copy(f, folder / f.name)
    corpus = "t-f1"
    drop_corpus(graph_session, corpus)
    env = kgp_env(settings)
    procs = [
        subprocess.Popen(
            [str(KGP), "ingest", str(folder), "--corpus", corpus, "--json"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for folder in (a, b)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=900)
        assert proc.returncode == 0, err[-2000:]

    assert duplicate_sources(graph_session, corpus) == []
    dirty = graph_session.read_raw(
        "MATCH (co:Corpus {name: $c}) RETURN co.piece_graph_dirty AS d", c=corpus
    )
    assert dirty and dirty[0]["d"] is False, "both runs ended but the piece graph is still dirty"
    assert_same_edges(*stored_and_rebuilt_edges(graph_session, settings, corpus))
