"""SIGTERM (what `timeout`, systemd, Kubernetes and schedulers send) during `kgp ingest`: the
batch already handed to the writer lands, the run is recorded as failed with the reason (not left
`running`), the corpus lock is released at once, the exit code is 143, and the next run resumes
to the same graph as a clean ingest of the same files.

The process is held at a write (``KGP_FAULT_PAUSE``) when the signal is sent, so the signal lands
while a batch is in flight on every run; the writer is let go only once the SIGTERM handler has
run in the main thread (it records the ``sigterm`` fault point in ``KGP_FAULT_TRACE``): no
sleep decides the order, however loaded the machine.

A SIGTERM that lands during the last batch is honoured too (the ``last batch`` case): every
source has then landed, and the run is still recorded as failed and exits 143; the next run
skips every source and completes."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import time

import pytest

from kg_platform.ingest import ingest_paths
from kg_platform.ingest.writer import drop_corpus
from tests.conftest import DOCUMENTS
from tests.faults.helpers import KGP, corpus_shape, duplicate_sources, kgp_env, orphans, run_kgp

pytestmark = pytest.mark.integration

FILES = ["md/docling-wiki-ibm.md", "md/markitdown-README.md", "docx/docling-word_sample.docx"]


def _wait_for(path, proc: subprocess.Popen, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"kgp ingest ended before its first write ({proc.returncode}): {err}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail("kgp ingest never reached its first write")
        time.sleep(0.05)


def _wait_for_line(path, line: str, proc: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not (path.exists() and line in path.read_text().split()):
        if proc.poll() is not None:
            pytest.fail(f"kgp ingest ended ({proc.returncode}) before its {line} point")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"kgp ingest never reached its {line} point")
        time.sleep(0.05)


# fault_point("write") is reached twice a batch (before and after its transaction): write:1 holds
# the first of the three batches before it writes, write:5 the third and last.
@pytest.mark.parametrize("held", ["write:1", "write:5"], ids=["first batch", "last batch"])
def test_sigterm_mid_ingest_records_the_run_and_the_next_run_resumes(
    graph_session, settings, embedder, tmp_path, held
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for rel in FILES:
        shutil.copy(DOCUMENTS / rel, folder)
    for corpus in ("t-term", "t-term-clean"):
        drop_corpus(graph_session, corpus)
    clean = ingest_paths(graph_session, settings, [folder], "t-term-clean", embedder=embedder)
    assert clean.status == "completed", clean.errors

    env = {**kgp_env(settings), "KGP_INGEST__TRANSACTION_ROWS": "1"}  # one source per batch
    gate, trace = tmp_path / "gate", tmp_path / "trace"
    proc = subprocess.Popen(
        [str(KGP), "ingest", str(folder), "--corpus", "t-term", "--json"],
        env={**env, "KGP_FAULT_PAUSE": f"{held}:{gate}", "KGP_FAULT_TRACE": str(trace)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _wait_for(gate.with_name("gate.reached"), proc)
    proc.send_signal(signal.SIGTERM)
    _wait_for_line(trace, "sigterm", proc)  # the handler ran while the writer is held
    gate.touch()
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 143, (proc.returncode, err[-2000:])
    assert "interrupted: stopped by SIGTERM" in err and "run the same command again" in err

    runs = graph_session.read_raw(
        "MATCH (r:IngestRun {corpus: $c}) RETURN r.status AS status, r.errors AS errors",
        c="t-term",
    )
    assert [r["status"] for r in runs] == ["failed"], runs  # recorded, not left `running`
    reasons = [e["reason"] for e in json.loads(runs[0]["errors"])]
    assert any("stopped by SIGTERM" in r for r in reasons), reasons
    landed = graph_session.read_raw(
        "MATCH (s:Source {corpus: $c}) RETURN count(s) AS n", c="t-term"
    )[0]["n"]
    assert landed >= 1  # the batch held at the writer was let through, not abandoned
    if held == "write:5":
        assert landed == len(FILES)  # the two before it, and the held last one

    # the lock was released: the next run starts at once (no wait) and resumes
    again = run_kgp(
        ["ingest", str(folder), "--corpus", "t-term", "--json"],
        {**env, "KGP_INGEST__LOCK_WAIT_S": "5"},
    )
    assert again.returncode == 0, again.stderr[-2000:]
    report = json.loads(again.stdout.strip().splitlines()[-1])
    assert len(report["skipped"]) == landed and len(report["added"]) == len(FILES) - landed
    assert corpus_shape(graph_session, "t-term") == corpus_shape(graph_session, "t-term-clean")
    assert duplicate_sources(graph_session, "t-term") == []
    assert orphans(graph_session, "t-term") == {}
