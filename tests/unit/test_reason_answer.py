"""Numbered citations, the answer's rendering, and the local server's pure parts (command line,
Gemma 3 chat template, state handling) without starting anything."""

from __future__ import annotations

import json

from kg_platform.reasoning.answer import cited_numbers, citations_for
from kg_platform.reasoning.types import NO_LLM_MARK, Answer, Evidence, Usage


def ev(i: int, **kw) -> Evidence:
    return Evidence(
        chunk_id=f"c{i}",
        text=f"Sentence number {i}.",
        source_title=f"Doc {i}",
        source_uri=f"file:///d{i}.md",
        section="Intro",
        page=i,
        **kw,
    )


def test_cited_numbers_reads_single_and_grouped_references():
    assert cited_numbers("see [1] and [2, 3]", "also [12]") == {1, 2, 3, 12}
    assert cited_numbers("no refs", "[a]") == set()


def test_every_passage_becomes_a_numbered_citation_and_cited_ones_are_marked():
    cites = citations_for([ev(1), ev(2), ev(3)], "Liverpool [3]", "because [1]")
    assert [c.n for c in cites] == [1, 2, 3]
    assert [c.cited for c in cites] == [True, False, True]
    assert cites[2].label() == "Doc 3, § Intro, p. 3 (chunk c3)"


def test_render_and_json_carry_answer_sources_and_totals():
    ans = Answer(
        question="q",
        answer="Liverpool [1]",
        citations=citations_for([ev(1)], "[1]"),
        mode="factual",
        usage=Usage(calls=2, prompt_tokens=100, completion_tokens=20, cost_usd=0.0012),
    )
    text = ans.render()
    assert "A: Liverpool [1]" in text and "*[1] Doc 1" in text
    assert "tokens 100 in + 20 out" in text and "$0.0012" in text
    data = json.loads(json.dumps(ans.to_dict()))
    assert data["usage"]["total_tokens"] == 120 and data["citations"][0]["chunk_id"] == "c1"
    assert NO_LLM_MARK == "[no LLM configured]"


def test_local_server_command_and_status_without_a_server(tmp_path):
    from kg_platform.config import Settings
    from kg_platform.llm.local_server import GEMMA_CHAT_FORMAT, LAUNCHER, LocalLLMServer

    server = LocalLLMServer(Settings(data_dir=tmp_path, local_llm={"n_threads": 3}))
    cmd = server.command(tmp_path / "m.gguf", 8123)
    assert cmd[1:3] == ["-m", LAUNCHER]
    assert cmd[cmd.index("--host") + 1] == "127.0.0.1" and "8123" in cmd
    assert cmd[cmd.index("--n_threads") + 1] == "3"
    assert cmd[cmd.index("--chat_format") + 1] == GEMMA_CHAT_FORMAT
    assert not server.status().running and server.stop() is False
    # a stale state file (pid of a process that is not our server) is never signalled
    server.home.mkdir(parents=True)
    server.state_file.write_text(json.dumps({"pid": 1, "port": 1, "model": "m"}))
    assert not server.status().running
    assert server.stop() is False and not server.state_file.exists()


def test_gemma3_chat_format_folds_the_system_message_into_the_first_turn():
    import pytest

    pytest.importorskip("llama_cpp", reason="the local-llm extra is not installed")
    from llama_cpp.llama_chat_format import get_chat_completion_handler

    from kg_platform.llm import local_server
    from kg_platform.llm.local_server import GEMMA_CHAT_FORMAT, _register_gemma3_format

    _register_gemma3_format()
    assert get_chat_completion_handler(GEMMA_CHAT_FORMAT) is not None

    out = local_server._format_gemma3(
        [
            {"role": "system", "content": "Reply with JSON."},
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "{}"},
            {"role": "user", "content": "Again"},
        ]
    )
    assert out.prompt == (
        "<start_of_turn>user\nReply with JSON.\n\nHi<end_of_turn>\n"
        "<start_of_turn>model\n{}<end_of_turn>\n"
        "<start_of_turn>user\nAgain<end_of_turn>\n<start_of_turn>model\n"
    )
    assert out.stop == ["<end_of_turn>"]
