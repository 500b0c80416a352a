"""The local llama.cpp server (``kgp llm serve-local``) with the packaged Gemma 3 270M, and one
real ``ask`` through it. Skipped unless ``KGP_RUN_LOCAL_LLM=1`` (needs the ``local-llm`` extra,
which builds llama-cpp-python from source; CI does not install it).

The model is far too small to judge answers, so this checks the plumbing for real: the server
starts and answers, every LLM step of the decomposition pipeline runs against it, tokens are
counted, the trajectory is stored, and ``stop`` ends the process."""

from __future__ import annotations

import pytest

from test_reason_ask import CORPUS, QUESTION, kb  # noqa: F401  (fixture)

pytestmark = [pytest.mark.integration, pytest.mark.local_llm, pytest.mark.slow]


@pytest.fixture(scope="module")
def local_server(tmp_path_factory):
    from kg_platform.config import Settings
    from kg_platform.llm.local_server import LocalLLMServer

    settings = Settings(data_dir=tmp_path_factory.mktemp("llm-local")).with_tuning(
        local_llm={"n_ctx": 4096}
    )
    server = LocalLLMServer(settings)
    status = server.start()
    try:
        yield status
    finally:
        server.stop()
        assert not server.status().running


def test_serve_local_answers_and_ask_runs_every_step(kb, embedder, local_server, tmp_path):
    from kg_platform.config import Settings
    from kg_platform.llm import get_llm
    from kg_platform.reasoning import Reasoner
    from kg_platform.reasoning.trajectory import load_trajectory

    assert local_server.running and local_server.base_url.startswith("http://127.0.0.1:")
    env = local_server.env()
    settings = Settings(
        corpus=CORPUS,
        cache_dir=tmp_path,
        llm={
            "base_url": env["KGP_LLM__BASE_URL"],
            "model": env["KGP_LLM__MODEL"],
            "concurrency": 1,
            "timeout_s": 300,
            "max_retries": 1,
        },
    ).with_tuning(decomposition={"max_rounds": 1})
    llm = get_llm(settings)
    assert llm.check()["completion_tokens"] > 0
    reasoner = Reasoner(graph=kb, embedder=embedder, settings=settings, llm=llm)
    answer = reasoner.ask(QUESTION, mode="decompose")
    assert answer.llm and answer.mode == "decompose"
    assert answer.usage.calls >= 2 and answer.usage.completion_tokens > 0
    assert answer.citations and answer.citations[0].source_title
    stored = load_trajectory(kb, answer.trajectory_id)
    assert stored is not None and stored["rounds"] == 1
    llm.close()
