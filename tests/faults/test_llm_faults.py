"""LLM faults through the scripted OpenAI-compatible server, over a real corpus in the suite's
Neo4j: what the documentation promises (docs/operations.md, "The LLM endpoint misbehaves").

- transient faults (429 with Retry-After, 500, a garbled body, a read timeout) are retried: the
  back-off honours Retry-After up to ``llm.retry_max_s`` and the run loses nothing;
- a reply that is malformed or truncated JSON gets one repair request; if the repair is bad too,
  or the retries run out, that chunk is recorded as failed and left unmarked;
- no half-written layer: a chunk is marked distilled exactly when its facts are written (one
  transaction per batch), and a re-run with a healthy endpoint completes exactly the failed
  chunks, without duplicating what was written.

Sleeps go through the client's ``sleep=`` seam, so nothing here waits out a back-off and no test
asserts on a duration."""

from __future__ import annotations

import json
import shutil
from collections import Counter

import pytest

from kg_platform.distilling import distill_corpus
from kg_platform.ingest import ingest_paths
from kg_platform.ingest.writer import drop_corpus
from kg_platform.llm.client import LLMClient
from support.fake_openai import FakeOpenAI, Raw, Slow, Status, llm_settings_for
from tests.conftest import DOCUMENTS
from tests.faults.llm_helpers import distill_reply, distilled_layer, passage_key

pytestmark = [pytest.mark.faults, pytest.mark.integration]

CORPUS = "t-llm-faults"
STEPS = "atomic,entities,tags"


@pytest.fixture()
def corpus(graph_session, settings, embedder, tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copy(DOCUMENTS / "md/docling-wiki-ibm.md", folder)
    drop_corpus(graph_session, CORPUS)
    report = ingest_paths(graph_session, settings, [folder], CORPUS, embedder=embedder)
    assert report.status == "completed", report.errors
    return CORPUS


def _client(server: FakeOpenAI, settings, tmp_path, sleeps: list[float], **llm) -> LLMClient:
    s = llm_settings_for(server, tmp_path / "llm-cache", concurrency=1, **llm)
    return LLMClient(s.llm, cache_dir=s.cache_dir, sleep=sleeps.append)


def _settings(settings, client: LLMClient):
    return settings.model_copy(update={"llm": client.settings})


def test_transient_faults_are_retried_honouring_retry_after_up_to_the_cap(
    graph_session, settings, embedder, corpus, tmp_path
):
    sleeps: list[float] = []
    with FakeOpenAI(distill_reply) as server:
        # the first request meets every transient fault in turn, then succeeds (5th attempt)
        server.script(
            Status(429, retry_after=0.25),
            Status(429, retry_after=3600),
            Status(500),
            Raw('{"id": "chatcmpl-x", "choices": [{"mess'),
            Slow(3.0, "late"),
        )
        client = _client(
            server,
            settings,
            tmp_path,
            sleeps,
            max_retries=5,
            retry_base_s=0.01,
            retry_max_s=7.0,
            timeout_s=1.0,
        )
        with client:
            report = distill_corpus(
                graph_session,
                embedder,
                client,
                _settings(settings, client),
                corpus=corpus,
                steps=STEPS,
            )
    assert report.failed == 0, report.results
    assert sleeps[:2] == [0.25, 7.0], sleeps  # Retry-After honoured, then capped
    assert len(sleeps) == 5 and all(0 < s <= 7.0 for s in sleeps[2:]), sleeps
    assert report.usage["retries"] == 5, report.usage
    layer = distilled_layer(graph_session, corpus)
    n = layer["n_chunks"]
    assert n > 1 and layer["atomic_done"] == layer["entities_done"] == layer["tags_done"] == n
    assert layer["questions"] == 2 * n and layer["entities"] == n + 1, layer


def test_bad_replies_leave_no_half_written_layer_and_a_rerun_completes_it(
    graph_session, settings, embedder, corpus, tmp_path
):
    seen: list[str] = []  # passages in the order the atomize step first met them
    calls: Counter[tuple[str, str]] = Counter()

    def faulty(body):
        kind, key = body["messages"][0]["content"][:24], passage_key(body)
        calls[(kind, key)] += 1
        if kind.startswith("You write the questions"):
            if key not in seen:
                seen.append(key)
            role = seen.index(key)
            if role == 0:  # truncated JSON, and the repair is truncated too
                return '{"questions": ["What does the passage say abo'
            if role == 1:  # the endpoint fails every attempt
                return Status(500)
            if role == 2 and calls[(kind, key)] == 1:  # malformed once, repaired
                return "Sure! Here are the questions: questions = [oops"
        if kind.startswith("You extract a knowledge") and seen and key == seen[0]:
            return '{"entities": [{"name": "Docling", "type": "prod'  # truncated, twice
        return distill_reply(body)

    sleeps: list[float] = []
    with FakeOpenAI(faulty) as server:
        client = _client(server, settings, tmp_path, sleeps, max_retries=2)
        with client:
            first = distill_corpus(
                graph_session,
                embedder,
                client,
                _settings(settings, client),
                corpus=corpus,
                steps=STEPS,
            )
    n = distilled_layer(graph_session, corpus)["n_chunks"]
    assert n >= 3, "the corpus needs at least three chunks for the three faults"
    assert first.results["atomic"]["failed"] == 2, first.results  # truncated + 500s
    assert first.results["entities"]["failed"] == 1, first.results  # truncated twice
    assert first.results["tags"]["failed"] == 0
    assert first.usage["invalid_outputs"] == 2, first.usage  # two replies still bad after repair
    layer = distilled_layer(graph_session, corpus)
    assert layer["marked_without_atoms"] == 0 and layer["atoms_without_mark"] == 0, layer
    assert layer["atomic_done"] == n - 2 and layer["entities_done"] == n - 1, layer
    assert layer["questions"] == 2 * (n - 2), layer
    failed_chunk_facts = graph_session.read_raw(
        "MATCH (c:Chunk:L1 {corpus: $c}) WHERE c.entities_v IS NULL "
        "OPTIONAL MATCH (e:Entity)-[:MENTIONED_IN]->(c) RETURN count(e) AS n",
        c=corpus,
    )
    assert failed_chunk_facts[0]["n"] == 0  # an unmarked chunk has no mentions either

    # a re-run against a healthy endpoint, with the same response cache (bad replies must not
    # be replayed from it), completes exactly what failed, duplicating nothing
    with FakeOpenAI(distill_reply) as healthy:
        client = _client(healthy, settings, tmp_path, [])
        with client:
            again = distill_corpus(
                graph_session,
                embedder,
                client,
                _settings(settings, client),
                corpus=corpus,
                steps=STEPS,
            )
        asked = Counter(
            (b["messages"][0]["content"][:24], passage_key(b)) for b in healthy.requests
        )
    assert again.failed == 0, again.results
    assert again.results["atomic"]["chunks"] == 2 and again.results["entities"]["chunks"] == 1
    assert again.results["tags"]["chunks"] == 0
    assert all(v == 1 for v in asked.values()) and sum(asked.values()) == 3, asked
    layer = distilled_layer(graph_session, corpus)
    assert layer["atomic_done"] == layer["entities_done"] == layer["tags_done"] == n
    assert layer["questions"] == 2 * n and layer["entities"] == n + 1, layer
    for dup in ("dup_questions", "dup_entities", "dup_tags", "dup_mentions"):
        assert layer[dup] == 0, layer


def test_the_cli_reports_an_unreachable_endpoint_in_one_line(
    graph_session, settings, corpus, tmp_path
):
    from tests.faults.helpers import kgp_env, run_kgp

    with FakeOpenAI(lambda body: Status(503)) as server:
        env = kgp_env(
            settings,
            KGP_LLM__BASE_URL=server.base_url,
            KGP_LLM__MODEL="fake-model",
            KGP_LLM__API_KEY="test",
            KGP_LLM__RETRY_BASE_S="0",
            KGP_LLM__RETRY_MAX_S="0",
            KGP_LLM__MAX_RETRIES="1",
            KGP_CACHE_DIR=str(tmp_path / "cache"),
        )
        res = run_kgp(
            ["distill", "--corpus", corpus, "--steps", "atomic,tags", "--json"], env, timeout=300
        )
    # atomic records its failed chunks and goes on; tags cannot even propose its classes
    assert res.returncode == 2, (res.returncode, res.stderr[-2000:])
    assert "Traceback" not in res.stderr
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "failed after 2 attempts" in errors[0], res.stderr[-2000:]
    layer = distilled_layer(graph_session, corpus)
    assert layer["atomic_done"] == 0 and layer["questions"] == 0 and layer["tags_done"] == 0
    json.dumps(layer)
