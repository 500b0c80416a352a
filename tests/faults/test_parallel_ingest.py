"""Two ``kgp ingest`` of one folder into one corpus at once (F8: both did all the work). The
corpus lock ``ingest:<corpus>`` makes the second wait (it says so: a ``waiting`` JSON event and
a warning), then it finds every source unchanged and skips it: each file is parsed, embedded and
written once, and the graph equals one clean ingest. The first run is held at its first parse by
the ``KGP_FAULT_PAUSE`` hook, so the overlap is certain, not a matter of timing."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from kg_platform.ingest.writer import drop_corpus
from tests.conftest import DOCUMENTS
from tests.faults.helpers import KGP, corpus_shape, duplicate_sources, kgp_env, orphans

pytestmark = [pytest.mark.faults, pytest.mark.integration]

FILES = ["md/docling-wiki-ibm.md", "md/markitdown-README.md", "html/autogen-blog.html"]


def _wait_for(path, proc: subprocess.Popen) -> None:
    import time

    while not path.exists():
        assert proc.poll() is None, proc.stderr.read()[-2000:]
        time.sleep(0.1)


def test_second_ingest_of_one_folder_waits_then_skips_everything(graph_session, settings, tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    for rel in FILES:
        shutil.copy(DOCUMENTS / rel, folder)
    corpus = "t-parallel"
    drop_corpus(graph_session, corpus)
    gate = tmp_path / "gate"
    args = [str(KGP), "ingest", str(folder), "--corpus", corpus, "--json"]
    first = subprocess.Popen(
        args,
        env=kgp_env(settings, KGP_FAULT_PAUSE=f"parse:1:{gate}"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    second = None
    try:
        _wait_for(gate.with_name("gate.reached"), first)  # holds the lock, mid-parse
        second = subprocess.Popen(
            args,
            env=kgp_env(settings, KGP_INGEST__LOCK_WAIT_S="900"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        waiting = json.loads(second.stdout.readline())  # its first event, before "start"
        assert waiting["event"] == "waiting", waiting
        assert waiting["holder"].split(":")[1] == str(first.pid)
    finally:
        gate.touch()
    out1, err1 = first.communicate(timeout=900)
    out2, err2 = second.communicate(timeout=900)
    assert first.returncode == 0, err1[-2000:]
    assert second.returncode == 0, err2[-2000:]
    assert "is being written by another run" in err2

    r1 = json.loads(out1.strip().splitlines()[-1])
    r2 = json.loads(out2.strip().splitlines()[-1])
    assert len(r1["added"]) == len(FILES) and r1["texts_embedded"] > 0
    assert r2["added"] == [] and r2["replaced"] == [] and len(r2["skipped"]) == len(FILES)
    assert r2["texts_embedded"] == 0  # the work was done once
    assert duplicate_sources(graph_session, corpus) == []
    assert orphans(graph_session, corpus) == {}
    assert len(corpus_shape(graph_session, corpus)) == len(FILES)
    lock = graph_session.read_raw(
        "MATCH (l:JobLock {name: $n}) RETURN l.owner AS o", n=f"ingest:{corpus}"
    )
    assert lock and lock[0]["o"] is None  # released by both
