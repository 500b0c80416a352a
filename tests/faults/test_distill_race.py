"""Two ``kgp distill`` on one corpus at once: the Neo4j lock ``distill:<corpus>`` decides. The
loser exits 3 with one line (``--json``: a ``locked`` object on stdout) and asks the LLM nothing;
the winner's layer has no duplicated question, entity, mention or tag, and every prompt was
answered once. A lock left by a process that died (kill -9) is taken over at once."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from collections import Counter

import pytest

from kg_platform.distilling.runner import distill_lock_name
from kg_platform.ingest import ingest_paths
from kg_platform.ingest.writer import drop_corpus
from support.fake_openai import FakeOpenAI
from tests.conftest import DOCUMENTS
from tests.faults.helpers import KGP, kgp_env, run_kgp
from tests.faults.llm_helpers import distill_reply, distilled_layer

pytestmark = [pytest.mark.faults, pytest.mark.integration]


def _llm_env(settings, server: FakeOpenAI, cache) -> dict[str, str]:
    return kgp_env(
        settings,
        KGP_LLM__BASE_URL=server.base_url,
        KGP_LLM__MODEL="fake-model",
        KGP_LLM__API_KEY="test",
        KGP_LLM__RETRY_BASE_S="0",
        KGP_LLM__RETRY_MAX_S="0",
        KGP_LLM__CONCURRENCY="1",
        KGP_CACHE_DIR=str(cache),
    )


@pytest.fixture()
def small_corpus(graph_session, settings, embedder, tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copy(DOCUMENTS / "md/docling-wiki-ibm.md", folder)
    corpus = "t-distill-race"
    drop_corpus(graph_session, corpus)
    graph_session.write_raw(
        "MATCH (l:JobLock {name: $n}) DETACH DELETE l", n=distill_lock_name(corpus)
    )
    report = ingest_paths(graph_session, settings, [folder], corpus, embedder=embedder)
    assert report.status == "completed", report.errors
    return corpus


def test_two_distills_at_once_one_wins_nothing_duplicated(
    graph_session, settings, small_corpus, tmp_path
):
    corpus = small_corpus
    gate, first_call = threading.Event(), threading.Event()

    def held(body):  # the winner blocks inside its first LLM call until the loser has finished
        first_call.set()
        assert gate.wait(600)
        return distill_reply(body)

    with FakeOpenAI(held) as server:
        env = _llm_env(settings, server, tmp_path / "cache")
        args = ["distill", "--corpus", corpus, "--json"]
        winner = subprocess.Popen(
            [str(KGP), *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        try:
            assert first_call.wait(300), "the first distill never called the LLM"
            loser = run_kgp(args, env, timeout=300)
        finally:
            gate.set()
        out, err = winner.communicate(timeout=600)
        prompts = [
            (b["messages"][0]["content"][:30], b["messages"][-1]["content"])
            for b in server.requests
        ]

    assert winner.returncode == 0, err[-2000:]
    assert loser.returncode == 3, loser.stderr[-2000:]
    assert "Traceback" not in loser.stderr
    assert "already running" in loser.stderr and len(loser.stderr.strip().splitlines()) <= 2
    locked = json.loads(loser.stdout.strip().splitlines()[-1])
    assert locked["status"] == "locked" and locked["exit_code"] == 3

    layer = distilled_layer(graph_session, corpus)
    assert layer["n_chunks"] > 1
    assert layer["atomic_done"] == layer["entities_done"] == layer["tags_done"] == layer["n_chunks"]
    assert layer["questions"] == 2 * layer["n_chunks"], layer
    assert layer["entities"] == layer["n_chunks"] + 1, layer  # one per passage + the shared one
    for dup in ("dup_questions", "dup_entities", "dup_tags", "dup_mentions"):
        assert layer[dup] == 0, layer
    # every prompt asked once: the loser paid for nothing
    assert [p for p, n in Counter(prompts).items() if n > 1] == []
    report = json.loads(out)
    assert report["results"]["atomic"]["chunks"] == layer["n_chunks"]


def test_a_dead_holders_distill_lock_is_taken_over(graph_session, settings, small_corpus, tmp_path):
    import socket

    corpus = small_corpus
    dead = subprocess.Popen(["true"])
    dead.wait()
    owner = f"{socket.gethostname()}:{dead.pid}:deadbeef"
    graph_session.write_raw(
        "MERGE (l:JobLock {name: $n}) SET l.owner = $o, l.expires = timestamp() + 3600000",
        n=distill_lock_name(corpus),
        o=owner,
    )
    with FakeOpenAI(distill_reply) as server:
        res = run_kgp(
            ["distill", "--corpus", corpus, "--steps", "atomic", "--json"],
            _llm_env(settings, server, tmp_path / "cache"),
            timeout=300,
        )
    assert res.returncode == 0, res.stderr[-2000:]
    layer = distilled_layer(graph_session, corpus)
    assert layer["atomic_done"] == layer["n_chunks"] > 0
    state = graph_session.read_raw(
        "MATCH (l:JobLock {name: $n}) RETURN l.owner AS o, l.reclaimed_from AS r",
        n=distill_lock_name(corpus),
    )[0]
    assert state["o"] is None and state["r"] == owner  # taken over, then released
    assert os.getpid() != dead.pid
