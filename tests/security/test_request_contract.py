"""One request contract at every door (issue 54, items 4 and 9, and its "Medium" findings).

Each finding of the review, as it was reported, against the real doors over the test Neo4j:
- MCP ``search`` with ``k=10**9`` returned Neo4j's ``java.lang.OutOfMemoryError`` text; ``k=-3``,
  ``query=""``, a 100,000-character query and ``level=99`` were accepted; unknown arguments were
  ignored. Each is now a tool error naming the field and its bound.
- The SDK and LangChain took ``k=1e9`` (a Java ArithmeticException came back): InvalidRequest,
  raised before the platform even opens its graph.
- A misspelt corpus answered "nothing found" everywhere: CorpusNotFound at every door (HTTP 404
  with the ``kgp corpus list`` hint, an MCP tool error, CLI exit 2, a LangChain exception).
- ``/v1/sources/{source}`` and ``DELETE /v1/corpora/{name}`` could not take a name holding
  ``/``; an empty ``corpus`` form field went to the default corpus; a file name over 255 bytes
  gave a 500.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import quote

import pytest

from kg_platform.config import ServeSettings
from kg_platform.errors import CorpusNotFound, InvalidRequest
from kg_platform.requests import (
    MAX_K,
    AskRequest,
    ExplainRequest,
    IngestRequest,
    SearchRequest,
    SourceRequest,
    UploadRequest,
)
from kg_platform.sdk import KnowledgePlatform
from kg_platform.serve.mcp_server import build_mcp
from kg_platform.serve.service import Service
from tests.faults.helpers import kgp_env, run_kgp
from tests.support.http_api import INTERNALS, api_client, problem

CORPUS = "contract-docs"
SLASHED = "a/b"
TYPO = "contract-dcos"
KEY = "test-key-request-contract"
AUTH = {"Authorization": f"Bearer {KEY}"}
QUESTION = "Which formats does the converter read?"
DOCS = {
    "converter.md": "# Converter notes\n\nThe converter reads PowerPoint, Word, Excel and HTML "
    "files and writes Markdown.\n\nIt keeps headings and tables.\n",
    "owls.md": "# Owls\n\nOwls hunt at night. Barn owls eat mice and voles.\n",
}
SLASHED_DOC = "# Red/Green notes\n\nRed and green are the colours of the traffic light test.\n"


# ------------------------------------------------------------------ the models (no database)
@pytest.mark.parametrize(
    ("model", "data", "says"),
    [
        (SearchRequest, {"query": "x", "k": 10**9}, "k must be at most 200"),
        (SearchRequest, {"query": "x", "k": -3}, "k must be at least 1"),
        (SearchRequest, {"query": "x", "k": 1e9}, "k must be at most 200"),
        (SearchRequest, {"query": "x", "k": True}, "k: "),
        (SearchRequest, {"query": ""}, "query must have at least 1 character"),
        (SearchRequest, {"query": "x" * 100_000}, "query must have at most 4,000 characters"),
        (SearchRequest, {"query": "x", "max_tokens": 100_001}, "max_tokens must be at most"),
        (SearchRequest, {"query": "x", "budget": 10}, "budget is not a field"),
        (SearchRequest, {"query": "x", "select": "best"}, "select must be one of"),
        (SearchRequest, {"query": "x", "strategy": "no-such"}, "unknown strategy 'no-such'"),
        (SearchRequest, {"query": "x", "corpus": "c" * 201}, "corpus must have at most 200"),
        (SearchRequest, {"query": "x", "corpus": "  "}, "corpus: the corpus name is empty"),
        (SearchRequest, {"query": "x", "scope": ["s"] * 201}, "scope must have at most 200"),
        (SearchRequest, {"query": "x", "scope": ["s" * 20_001]}, "scope[0] must have at most"),
        (ExplainRequest, {"query": "x", "item_id": ""}, "item_id must have at least 1"),
        (AskRequest, {"question": "x", "context_tokens": 0}, "context_tokens must be at least 1"),
        (AskRequest, {"question": "x", "mode": "guess"}, "mode must be one of"),
        (SourceRequest, {"source": "s", "level": 99}, "level must be at most 6"),
        (IngestRequest, {"paths": []}, "paths must have at least 1 entries"),
        (UploadRequest, {"files": ["é" * 200]}, "files[0]: the file name has 400 bytes"),
        (UploadRequest, {"files": ["a.md"], "corpus": ""}, "corpus: the corpus name is empty"),
    ],
)
def test_each_bound_is_one_invalid_request_naming_the_field(model, data, says) -> None:
    with pytest.raises(InvalidRequest) as caught:
        model.parse(data)
    message = str(caught.value)
    assert says in message, message
    assert caught.value.hint
    assert "x" * 100 not in message  # a long input is not echoed back


def test_the_token_budget_has_one_name_and_the_old_ones_still_work() -> None:
    assert AskRequest.parse({"question": "q", "context_tokens": 7}).max_tokens == 7
    assert AskRequest.parse({"question": "q", "max_tokens": 7}).max_tokens == 7
    assert SearchRequest.parse({"query": "q", "max_tokens": 7}).max_tokens == 7


def test_the_closed_choices_are_the_platforms_own() -> None:
    from typing import get_args

    from kg_platform.reasoning import MODES
    from kg_platform.requests import Mode, Select
    from kg_platform.retrieval.rerank.selection import SELECTIONS

    assert set(get_args(Select)) == set(SELECTIONS)
    assert set(get_args(Mode)) == set(MODES)


# ----------------------------------------------------------------------------- the graph
@pytest.fixture(scope="module")
def sdk(graph_session, settings, embedder, tmp_path_factory):
    root = tmp_path_factory.mktemp("contract")
    docs = root / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    slashed = root / "slashed"
    slashed.mkdir()
    (slashed / "red-green.md").write_text(SLASHED_DOC, encoding="utf-8")
    platform = KnowledgePlatform(settings, graph=graph_session, embedder=embedder)
    for folder, corpus in ((docs, CORPUS), (slashed, SLASHED)):
        report = platform.ingest([folder], corpus=corpus)
        assert report.status == "completed", report.summary()
    return platform


@pytest.fixture(scope="module")
def api(sdk, settings, embedder):
    served = settings.model_copy(update={"serve": ServeSettings(rate_per_s=50, rate_burst=200)})
    with api_client(served, embedder, KEY) as client:
        yield client


@pytest.mark.integration
def test_the_sdk_refuses_out_of_bounds_values_before_opening_its_graph(settings) -> None:
    kp = KnowledgePlatform(settings)  # a fresh object: its graph is opened on first use
    calls = [
        (lambda: kp.search(QUESTION, k=10**9), "k must be at most 200"),
        (lambda: kp.search(QUESTION, k=-3), "k must be at least 1"),
        (lambda: kp.retrieve(QUESTION, k=int(1e9)), "k must be at most 200"),
        (lambda: kp.search(""), "query must have at least 1 character"),
        (lambda: kp.search("x" * 100_000), "at most 4,000 characters"),
        (lambda: kp.search(QUESTION, strategy="no-such"), "unknown strategy"),
        (lambda: kp.ask(QUESTION, context_tokens=10**9), "context_tokens must be at most"),
        (lambda: kp.ask(QUESTION, mode="guess"), "mode must be one of"),
        (lambda: kp.source_outline("owls.md", level=99), "level must be at most 6"),
    ]
    for call, says in calls:
        with pytest.raises(InvalidRequest, match=says.replace("(", r"\(")):
            call()
    assert kp._graph is None, "a Cypher statement ran before the request was checked"


@pytest.mark.integration
def test_the_sdk_says_a_misspelt_corpus_is_not_there(sdk) -> None:
    assert sdk.search(QUESTION, corpus=CORPUS, k=2).items  # the corpus itself answers
    for call in (
        lambda: sdk.search(QUESTION, corpus=TYPO),
        lambda: sdk.retrieve(QUESTION, corpus=TYPO),
        lambda: sdk.ask(QUESTION, corpus=TYPO),
        lambda: sdk.source_outline("owls.md", corpus=TYPO),
    ):
        with pytest.raises(CorpusNotFound, match=TYPO) as caught:
            call()
        assert "kgp corpus list" in caught.value.hint


# -------------------------------------------------------------------------------------- MCP
def _mcp(sdk, settings, embedder, script) -> Any:
    """Run ``script(client)`` against the MCP server in this process (the SDK's own client),
    as the trusted local client of ``kgp mcp`` over stdio (``run_stdio``)."""
    from mcp.client import Client

    from kg_platform.serve.principal import LOCAL, McpPrincipal

    service = Service(KnowledgePlatform(settings, graph=sdk.graph, embedder=embedder))
    server = build_mcp(service)
    server.middleware.insert(0, McpPrincipal(local=LOCAL))  # as over stdio: the local client

    async def main() -> Any:
        async with Client(server) as client:
            return await script(client)

    try:
        return asyncio.run(asyncio.wait_for(main(), timeout=300))
    finally:
        service.tasks.shutdown()


def _text(result: Any) -> str:
    return " ".join(getattr(c, "text", "") for c in result.content)


@pytest.mark.integration
def test_mcp_tools_refuse_out_of_bounds_and_unknown_arguments(sdk, settings, embedder) -> None:
    calls = [
        ("search", {"query": QUESTION, "corpus": CORPUS, "k": 10**9}, "k must be at most 200"),
        ("search", {"query": QUESTION, "corpus": CORPUS, "k": -3}, "k must be at least 1"),
        ("search", {"query": "", "corpus": CORPUS}, "query must have at least 1 character"),
        ("search", {"query": "x" * 100_000}, "query must have at most 4,000 characters"),
        ("search", {"query": QUESTION, "limit": 3}, "limit is not a field"),
        ("explain", {"query": QUESTION, "k": 10**9}, "k must be at most 200"),
        ("ask", {"question": QUESTION, "context_tokens": 0}, "context_tokens must be at least 1"),
        ("ask", {"question": QUESTION, "temperature": 1}, "temperature is not a field"),
        ("get_source", {"source": "owls.md", "corpus": CORPUS, "level": 99}, "level must be at"),
    ]

    async def script(client: Any) -> list[tuple[str, Any]]:
        return [(says, await client.call_tool(tool, args)) for tool, args, says in calls]

    for says, result in _mcp(sdk, settings, embedder, script):
        message = _text(result)
        assert result.is_error, (says, message[:500])
        assert says in message, message[:1000]
        assert not any(j in message for j in INTERNALS), message[:1000]


@pytest.mark.integration
def test_mcp_publishes_the_bounds_and_answers_within_them(sdk, settings, embedder) -> None:
    async def script(client: Any) -> tuple[Any, Any, Any]:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        found = await client.call_tool("search", {"query": QUESTION, "corpus": CORPUS, "k": 2})
        listed = await client.call_tool(
            "search", {"query": QUESTION, "corpus": CORPUS, "k": 2, "scope": '["converter.md"]'}
        )
        return tools, found, listed

    tools, found, listed = _mcp(sdk, settings, embedder, script)
    schema = tools["search"].input_schema
    assert schema["additionalProperties"] is False
    assert f'"maximum": {MAX_K}' in json.dumps(schema["properties"]["k"])
    assert "maximum" in json.dumps(tools["get_source"].input_schema["properties"]["level"])
    assert not found.is_error, _text(found)
    assert len(found.structured_content["items"]) == 2
    assert not listed.is_error, _text(listed)  # a list sent as a JSON string still reads
    assert {it["source_title"] for it in listed.structured_content["items"]} == {"Converter notes"}


@pytest.mark.integration
def test_mcp_tools_say_a_misspelt_corpus_is_not_there(sdk, settings, embedder) -> None:
    calls = [
        ("search", {"query": QUESTION, "corpus": TYPO}),
        ("explain", {"query": QUESTION, "corpus": TYPO}),
        ("ask", {"question": QUESTION, "corpus": TYPO}),
        ("get_source", {"source": "owls.md", "corpus": TYPO}),
    ]

    async def script(client: Any) -> list[Any]:
        return [await client.call_tool(tool, args) for tool, args in calls]

    for result in _mcp(sdk, settings, embedder, script):
        message = _text(result)
        assert result.is_error and f"there is no corpus {TYPO!r}" in message, message[:500]
        assert "kgp corpus list" in message


# ------------------------------------------------------------------------------------- HTTP
@pytest.mark.integration
def test_http_answers_404_for_a_misspelt_corpus_at_every_read(api) -> None:
    answers = [
        api.post("/v1/search", json={"query": QUESTION, "corpus": TYPO}, headers=AUTH),
        api.post("/v1/explain", json={"query": QUESTION, "corpus": TYPO}, headers=AUTH),
        api.post("/v1/ask", json={"question": QUESTION, "corpus": TYPO}, headers=AUTH),
        api.get("/v1/sources/owls.md", params={"corpus": TYPO}, headers=AUTH),
    ]
    for response in answers:
        body = problem(response, 404)
        assert TYPO in body["detail"] and "kgp corpus list" in body["hint"], body
        assert body["type"].endswith("corpus-not-found"), body
    fine = api.post("/v1/search", json={"query": QUESTION, "corpus": CORPUS}, headers=AUTH)
    assert fine.status_code == 200 and fine.json()["items"], fine.text[:1000]


@pytest.mark.integration
def test_http_refuses_each_bound_with_a_422_naming_it(api) -> None:
    for body, field in [
        ({"query": QUESTION, "k": 10**9}, "k"),
        ({"query": QUESTION, "k": -3}, "k"),
        ({"query": "x" * 4001}, "query"),
        ({"query": QUESTION, "corpus": "c" * 201}, "corpus"),
        ({"query": QUESTION, "scope": ["s"] * 201}, "scope"),
        ({"query": QUESTION, "select": "best"}, "select"),
    ]:
        refused = problem(api.post("/v1/search", json=body, headers=AUTH), 422)
        assert field in refused["detail"], refused
    level = problem(api.get("/v1/sources/owls.md", params={"level": 99}, headers=AUTH), 422)
    assert "level" in level["detail"]


@pytest.mark.integration
def test_http_takes_names_that_hold_a_slash(api, sdk) -> None:
    titled = api.get(
        f"/v1/sources/{quote('Red/Green notes', safe='')}",
        params={"corpus": SLASHED},
        headers=AUTH,
    )
    assert titled.status_code == 200, titled.text[:1000]
    outline = titled.json()
    assert outline["corpus"] == SLASHED and outline["title"] == "Red/Green notes"
    by_uri = api.get(f"/v1/sources/{outline['uri']}", params={"corpus": SLASHED}, headers=AUTH)
    assert by_uri.status_code == 200 and by_uri.json()["id"] == outline["id"], by_uri.text[:500]

    dropped = api.delete(f"/v1/corpora/{SLASHED}", headers=AUTH)
    assert dropped.status_code == 200, dropped.text[:1000]
    assert dropped.json() == {"corpus": SLASHED, "sources_deleted": 1}
    assert SLASHED not in [c.name for c in sdk.corpora()]
    again = problem(api.delete(f"/v1/corpora/{SLASHED}", headers=AUTH), 404)
    assert "kgp corpus list" in again["hint"]


@pytest.mark.integration
def test_http_upload_refuses_an_empty_corpus_field_and_a_long_file_name(api, sdk) -> None:
    before = {c.name for c in sdk.corpora()}
    empty = api.post(
        "/v1/ingest/upload",
        files={"files": ("note.md", b"# Note\n\nA note.\n", "text/markdown")},
        data={"corpus": ""},
        headers=AUTH,
    )
    assert "corpus" in problem(empty, 422)["detail"]  # the empty field is named
    long_name = "n" * 300 + ".md"
    named = api.post(
        "/v1/ingest/upload",
        files={"files": (long_name, b"# Note\n\nA note.\n", "text/markdown")},
        data={"corpus": CORPUS},
        headers=AUTH,
    )
    assert "at most 255" in problem(named, 422)["detail"]
    assert {c.name for c in sdk.corpora()} == before


# -------------------------------------------------------------------------------- LangChain
@pytest.mark.integration
def test_langchain_refuses_k_1e9_and_a_misspelt_corpus(sdk) -> None:
    pytest.importorskip("langchain_core")
    from kg_platform.integrations.langchain import KGPlatformRetriever

    with pytest.raises(InvalidRequest, match="k must be at most 200"):
        KGPlatformRetriever(platform=sdk, k=int(1e9), corpus=CORPUS)
    retriever = KGPlatformRetriever(platform=sdk, k=2, corpus=CORPUS)
    assert len(retriever.invoke(QUESTION)) == 2
    with pytest.raises(InvalidRequest, match="k must be at most 200"):
        retriever.invoke(QUESTION, k=10**9)
    with pytest.raises(CorpusNotFound, match=TYPO):
        KGPlatformRetriever(platform=sdk, corpus=TYPO).invoke(QUESTION)
    with pytest.raises(CorpusNotFound, match=TYPO):
        retriever.invoke(QUESTION, corpus=TYPO)


# -------------------------------------------------------------------------------------- CLI
@pytest.mark.integration
def test_cli_exits_2_for_a_misspelt_corpus_and_an_out_of_bounds_value(sdk, settings) -> None:
    env = kgp_env(settings)
    for args, says in [
        (["retrieve", QUESTION, "--corpus", TYPO], f"there is no corpus {TYPO!r}"),
        (["retrieve", QUESTION, "--corpus", TYPO, "--explain"], "kgp corpus list"),
        (["retrieve", QUESTION, "--k", str(10**9)], "k must be at most 200"),
        (["retrieve", "", "--corpus", CORPUS], "query must have at least 1 character"),
        (["ask", QUESTION, "--corpus", TYPO], f"there is no corpus {TYPO!r}"),
        (["ask", QUESTION, "--mode", "guess"], "mode must be one of"),
    ]:
        done = run_kgp(args, env, timeout=300)
        assert done.returncode == 2, (
            args,
            done.returncode,
            done.stdout[-500:],
            done.stderr[-2000:],
        )
        assert says in done.stderr, (args, done.stderr[-2000:])
        assert "Traceback" not in done.stderr


# ------------------------------------------------------------------- the contract's loose ends
LONG_CORPUS = "c" * 201


@pytest.mark.integration
def test_sdk_and_cli_ingest_refuse_a_corpus_name_over_200_characters(
    sdk, settings, tmp_path
) -> None:
    import kg_platform.corpus_name
    import kg_platform.requests
    from kg_platform.corpus_name import check_corpus
    from kg_platform.errors import ConfigError

    doc = tmp_path / "note.md"
    doc.write_text("# Note\n\nA short note about owls.\n", encoding="utf-8")
    assert check_corpus("c" * 200) == "c" * 200
    with pytest.raises(ConfigError, match="at most 200"):
        check_corpus(LONG_CORPUS)
    with pytest.raises(InvalidRequest, match="corpus must have at most 200 characters"):
        sdk.ingest([doc], corpus=LONG_CORPUS)
    with pytest.raises(InvalidRequest, match="paths must have at least 1 entries"):
        sdk.ingest([], corpus=CORPUS)
    with pytest.raises(InvalidRequest, match=r"include\[0\] must have at most"):
        sdk.ingest([doc], corpus=CORPUS, include=["x" * 20_001])
    done = run_kgp(["ingest", str(doc), "--corpus", LONG_CORPUS], kgp_env(settings), timeout=300)
    assert done.returncode == 2, (done.returncode, done.stdout[-500:], done.stderr[-2000:])
    assert "at most 200" in done.stderr and "Traceback" not in done.stderr, done.stderr[-2000:]
    names = [c.name for c in sdk.corpora()]
    assert LONG_CORPUS not in names and CORPUS in names
    shared = getattr(kg_platform.corpus_name, "MAX_CORPUS_CHARS", None)
    assert shared == kg_platform.requests.MAX_CORPUS_CHARS == 200  # one bound, shared


def _comparable(body: dict[str, Any], name: str) -> str:
    """A problem body without its per-request fields, the corpus name replaced."""
    kept = {k: v for k, v in body.items() if "request" not in k.lower()}
    return json.dumps(kept, sort_keys=True).replace(repr(name), "NAME")


@pytest.mark.integration
def test_http_runs_of_a_missing_or_hidden_corpus_is_one_404(sdk, settings, embedder) -> None:
    from kg_platform.serve.keys import KeyStore

    # a key that may see only TYPO: CORPUS exists but is hidden from it, TYPO is visible but
    # missing; the two must not be told apart
    scoped, _ = KeyStore(sdk.graph).add("contract-runs-typo", [TYPO], "read")
    served = settings.model_copy(update={"serve": ServeSettings(rate_per_s=50, rate_burst=200)})
    with api_client(served, embedder, KEY) as client:
        listed = client.get("/v1/runs", params={"corpus": CORPUS}, headers=AUTH)
        assert listed.status_code == 200 and listed.json()["runs"], listed.text[:1000]
        missing = problem(client.get("/v1/runs", params={"corpus": TYPO}, headers=AUTH), 404)
        bearer = {"Authorization": f"Bearer {scoped}"}
        mine = problem(client.get("/v1/runs", params={"corpus": TYPO}, headers=bearer), 404)
        hidden = problem(client.get("/v1/runs", params={"corpus": CORPUS}, headers=bearer), 404)
    assert missing["type"].endswith("corpus-not-found"), missing
    assert f"there is no corpus {TYPO!r}" in missing["detail"], missing
    assert "kgp corpus list" in missing["hint"], missing
    assert _comparable(mine, TYPO) == _comparable(missing, TYPO)
    assert _comparable(hidden, CORPUS) == _comparable(missing, TYPO)


@pytest.mark.integration
def test_mcp_list_corpora_and_cancel_run_refuse_unknown_arguments(sdk, settings, embedder) -> None:
    calls = [
        ("list_corpora", {"corpus": CORPUS}, "corpus is not a field"),
        ("cancel_run", {"run_id": "run-x", "force": True}, "force is not a field"),
        ("cancel_run", {"run_id": ""}, "run_id must have at least 1 character"),
        ("cancel_run", {"run_id": "r" * 201}, "run_id must have at most 200 characters"),
        ("cancel_run", {}, "run_id is required"),
        ("cancel_run", {"run_id": "run-none"}, "there is no ingestion run 'run-none'"),
    ]

    async def script(client: Any) -> tuple[Any, Any, list[tuple[str, Any]]]:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        fine = await client.call_tool("list_corpora", {})
        return tools, fine, [(says, await client.call_tool(t, a)) for t, a, says in calls]

    tools, fine, results = _mcp(sdk, settings, embedder, script)
    for says, result in results:
        message = _text(result)
        assert result.is_error, (says, message[:500])
        assert says in message, message[:1000]
    assert not fine.is_error, _text(fine)
    assert CORPUS in [c["name"] for c in fine.structured_content["corpora"]]
    for name in ("list_corpora", "cancel_run"):
        assert tools[name].input_schema["additionalProperties"] is False, tools[name]
    assert tools["cancel_run"].input_schema["properties"]["run_id"]["maxLength"] == 200
