"""The LLM client against the scripted OpenAI-compatible server: retries, cache, structured
output repair, usage accounting, concurrency limit (issue item 1 and its acceptance tests)."""

from __future__ import annotations

import json
import threading

import pytest

from kg_platform.errors import LLMError, LLMOutputInvalid
from kg_platform.llm import get_llm, get_prompt, parse_reply
from kg_platform.llm.replies import AtomicQuestions, FeedbackReply
from kg_platform.llm.structured import JSONNotFound, extract_json
from support.fake_openai import FakeOpenAI, Raw, Status, fake_llm, llm_settings_for  # noqa: F401

MSG = [{"role": "user", "content": "Say hello"}]


@pytest.fixture()
def llm(fake_llm, tmp_path):
    client = get_llm(llm_settings_for(fake_llm, tmp_path))
    yield client
    client.close()


def test_not_configured_returns_none(tmp_path):
    from kg_platform.config import Settings

    assert get_llm(Settings(cache_dir=tmp_path)) is None


def test_chat_returns_text_and_usage(fake_llm, llm):
    fake_llm.script("hello there")
    res = llm.chat(MSG)
    assert res.text == "hello there" and not res.cached
    assert res.prompt_tokens > 0 and res.completion_tokens == 2
    assert fake_llm.requests[0]["model"] == "fake-model"
    assert llm.usage.calls == 1 and llm.usage.prompt_tokens == res.prompt_tokens


def test_429_then_success_is_retried_honouring_retry_after(fake_llm, tmp_path):
    slept: list[float] = []
    from kg_platform.llm import LLMClient

    settings = llm_settings_for(fake_llm, tmp_path, retry_base_s=0.01, retry_max_s=2.0)
    client = LLMClient(settings.llm, cache_dir=tmp_path, sleep=slept.append)
    fake_llm.script(Status(429, retry_after=1.5), Status(503), "ok")
    res = client.chat(MSG)
    assert res.text == "ok"
    assert fake_llm.calls == 3
    assert slept[0] == 1.5  # Retry-After honoured
    assert 0.01 <= slept[1] <= 0.05  # then exponential backoff (attempt 2)
    assert client.usage.retries == 2 and client.usage.calls == 1


def test_retry_after_is_capped(fake_llm, tmp_path):
    from kg_platform.llm import LLMClient

    slept: list[float] = []
    settings = llm_settings_for(fake_llm, tmp_path, retry_max_s=3.0)
    client = LLMClient(settings.llm, cache_dir=tmp_path, sleep=slept.append)
    fake_llm.script(Status(429, retry_after=3600), "ok")
    assert client.chat(MSG).text == "ok"
    assert slept == [3.0]


def test_retries_exhausted_raise_llm_error(fake_llm, llm):
    fake_llm.script(*[Status(500)] * 4)
    with pytest.raises(LLMError, match="after 4 attempts"):
        llm.chat(MSG)
    assert fake_llm.calls == 4


def test_non_retryable_status_fails_fast_with_hint(fake_llm, llm):
    fake_llm.script(Status(401))
    with pytest.raises(LLMError) as err:
        llm.chat(MSG)
    assert fake_llm.calls == 1 and "KGP_LLM__API_KEY" in err.value.hint


def test_garbled_http_body_is_retried(fake_llm, llm):
    fake_llm.script(Raw("{not json at all"), "fine")
    assert llm.chat(MSG).text == "fine"
    assert fake_llm.calls == 2


def test_cache_makes_second_run_issue_zero_calls(fake_llm, tmp_path):
    fake_llm.script(json.dumps({"questions": ["What is X?"]}))
    settings = llm_settings_for(fake_llm, tmp_path)
    first = get_llm(settings)
    out1 = first.structured("atomize", {"title": "T", "text": "X is Y.", "max_questions": 3})
    first.close()
    second = get_llm(settings)  # a new process-like client on the same cache dir
    out2 = second.structured("atomize", {"title": "T", "text": "X is Y.", "max_questions": 3})
    assert out1 == out2
    assert fake_llm.calls == 1
    assert second.usage.calls == 0 and second.usage.cache_hits == 1
    # different parameters miss the cache
    fake_llm.script(json.dumps({"questions": ["Other?"]}))
    second.structured(
        "atomize", {"title": "T", "text": "X is Y.", "max_questions": 3}, temperature=0.0
    )
    assert fake_llm.calls == 2


def test_malformed_structured_output_is_repaired(fake_llm, llm):
    fake_llm.script("Sure! here are questions: [oops", '{"questions": ["Who founded Acme?"]}')
    out = llm.structured(
        "atomize", {"title": "", "text": "Acme was founded by Ann.", "max_questions": 2}
    )
    assert isinstance(out, AtomicQuestions) and out.questions == ["Who founded Acme?"]
    assert fake_llm.calls == 2
    repair = fake_llm.requests[1]["messages"]
    assert repair[-2] == {"role": "assistant", "content": "Sure! here are questions: [oops"}
    assert "JSON schema" in repair[-1]["content"]


def test_invalid_after_repair_is_recorded_and_raised(fake_llm, llm):
    fake_llm.script("no json", '{"wrong": 1, "questions": 5}')
    with pytest.raises(LLMOutputInvalid):
        llm.structured("answer", {"question": "q", "context": "c"})
    assert llm.usage.invalid_outputs == 1
    failures = llm.cache.failures()
    assert failures and failures[0]["prompt"] == "answer"


def test_map_structured_respects_concurrency_and_keeps_order(tmp_path):
    def responder(body):
        text = body["messages"][-1]["content"]
        return json.dumps({"questions": [f"Q about {text.split('Content:')[1].split()[0]}?"]})

    with FakeOpenAI(responder, delay_s=0.05) as server:
        client = get_llm(llm_settings_for(server, tmp_path, concurrency=2))
        items = [{"title": "", "text": f"item{i} body", "max_questions": 1} for i in range(8)]
        with client.meter() as run:
            outs = client.map_structured("atomize", items)
        assert [o.questions[0] for o in outs] == [f"Q about item{i}?" for i in range(8)]
        assert server.max_in_flight == 2
        assert run.calls == 8  # meter propagated into worker threads
        assert run.by_prompt["atomize@1"]["calls"] == 8
        client.close()


def test_meters_are_per_context(fake_llm, llm):
    fake_llm.responder = lambda body: "x"
    with llm.meter() as outer:
        llm.chat(MSG, use_cache=False)
        box = {}

        def other_thread():
            with llm.meter() as mine:
                llm.chat([{"role": "user", "content": "other"}])
                box["m"] = mine

        t = threading.Thread(target=other_thread)
        t.start()
        t.join()
    assert outer.calls == 1 and box["m"].calls == 1 and llm.usage.calls == 2


def test_usage_counted_offline_when_server_reports_none(tmp_path):
    with FakeOpenAI(lambda b: "one two three", report_usage=False) as server:
        client = get_llm(
            llm_settings_for(server, tmp_path, price_input_per_1m=10, price_output_per_1m=30)
        )
        res = client.chat(MSG)
        assert res.completion_tokens == 3 and res.prompt_tokens >= 3
        assert res.cost_usd == pytest.approx((res.prompt_tokens * 10 + 3 * 30) / 1e6)
        client.close()


def test_extract_json_variants():
    assert extract_json('```json\n{"a": [1, 2,]}\n```') == {"a": [1, 2]}
    assert extract_json('Here: {"a": "b}"} trailing') == {"a": "b}"}
    assert extract_json('["x", "y"]') == ["x", "y"]
    with pytest.raises(JSONNotFound):
        extract_json("nothing here")


def test_feedback_prompt_parses_paper_format_and_bare_list_wraps():
    fb = parse_reply(get_prompt("self_feedback"), "Evaluation Score: 7\nContext Adjustment: -1")
    assert isinstance(fb, FeedbackReply) and fb.score == 7 and fb.adjustment == -1
    qs = parse_reply(get_prompt("atomize"), '["A?", "a?", " B? "]')
    assert qs.questions == ["A?", "B?"]  # dedup, strip
    dec = parse_reply(
        get_prompt("decompose"), "<decompose>True</decompose><sub-question>Who is X?</sub-question>"
    )
    assert dec.decompose and dec.sub_question == "Who is X?"


def test_every_prompt_renders_with_its_placeholders():
    import re

    from kg_platform.llm import PROMPTS

    for prompt in PROMPTS.values():
        names = set(re.findall(r"\$(\w+)", prompt.user))
        msgs = prompt.render({n: "v" for n in names})
        assert msgs[-1]["role"] == "user" and "$" not in msgs[-1]["content"]
        with pytest.raises(LLMError):
            if names:
                prompt.render({})
            else:
                raise LLMError("no placeholders")
