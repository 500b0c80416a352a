"""``kgp mcp`` with the ``mcp`` SDK's own client: over stdio (the client spawns ``kgp mcp``)
and over streamable HTTP (``kgp mcp --http``, behind the API key). The client lists the five
tools, ``search`` returns the same items, in the same order, as the SDK for the same question,
the corpora are resources, and a platform error reaches the model with its hint."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from kg_platform._process import free_port
from kg_platform.demo import DEMO_QUESTION
from kg_platform.sdk import KnowledgePlatform
from kg_platform.serve.mcp_server import TOOLS
from tests.faults.helpers import KGP, kgp_env
from tests.support.serving import stop, wait_http

pytestmark = pytest.mark.integration

SAMPLES = Path(__file__).resolve().parents[2] / "ingestion" / "samples"
CORPUS = "mcp-samples"
KEY = "test-key-serve-mcp-0123456789abcdef"  # 32 characters or more


@pytest.fixture(scope="module")
def sdk(graph_session, settings, embedder):
    platform = KnowledgePlatform(settings, graph=graph_session, embedder=embedder)
    report = platform.ingest([SAMPLES], corpus=CORPUS, exclude=["SOURCES.md"])
    assert report.status == "completed", report.summary()
    return platform


def _structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


async def _exercise(client: Any, expected: list[tuple[str, str]]) -> None:
    tools = await client.list_tools()
    assert {t.name for t in tools.tools} == set(TOOLS)
    search = next(t for t in tools.tools if t.name == "search")
    assert {"query", "corpus"} <= set(search.input_schema["properties"])

    found = _structured(
        await client.call_tool("search", {"query": DEMO_QUESTION, "corpus": CORPUS, "k": 5})
    )
    assert [(it["id"], it["text"]) for it in found["items"]] == expected

    corpora = _structured(await client.call_tool("list_corpora", {}))["corpora"]
    assert CORPUS in [c["name"] for c in corpora]
    source = _structured(
        await client.call_tool("get_source", {"source": "markitdown-README.md", "corpus": CORPUS})
    )
    assert "PowerPoint" in " ".join(c["text"] for s in source["sections"] for c in s["chunks"])
    explained = _structured(
        await client.call_tool("explain", {"query": DEMO_QUESTION, "corpus": CORPUS, "k": 2})
    )
    assert explained["browser"].startswith(":param ids =>") and len(explained["items"]) == 2
    answer = _structured(
        await client.call_tool("ask", {"question": DEMO_QUESTION, "corpus": CORPUS})
    )
    assert answer["citations"] and answer["answer"]

    bad = await client.call_tool(
        "search", {"query": DEMO_QUESTION, "corpus": CORPUS, "strategy": "no-such-strategy"}
    )
    assert bad.is_error
    message = " ".join(c.text for c in bad.content)
    assert "no-such-strategy" in message and "hint:" in message and "hybrid" in message

    gone = await client.call_tool("cancel_run", {"run_id": "run-00000000T000000-deadbeef"})
    assert gone.is_error and "no ingestion run" in " ".join(c.text for c in gone.content)

    resources = await client.list_resources()
    assert "kgp://corpora" in [str(r.uri) for r in resources.resources]
    read = await client.read_resource("kgp://corpora")
    assert CORPUS in [c["name"] for c in json.loads(read.contents[0].text)]
    one = await client.read_resource(f"kgp://corpora/{CORPUS}")
    assert json.loads(one.contents[0].text)["sources"] == 3


def _expected(sdk) -> list[tuple[str, str]]:
    items = sdk.search(DEMO_QUESTION, corpus=CORPUS, k=5).items
    return [(it.id, it.text) for it in items]


def test_mcp_over_stdio_lists_the_tools_and_searches_as_the_sdk(sdk, settings) -> None:
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    env = kgp_env(settings)
    params = StdioServerParameters(command=str(KGP), args=["mcp"], env=env)

    async def main() -> None:
        async with Client(params) as client:
            await _exercise(client, _expected(sdk))

    asyncio.run(asyncio.wait_for(main(), timeout=300))


def test_mcp_over_streamable_http_needs_the_key_and_searches_as_the_sdk(sdk, settings) -> None:
    from mcp.client import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    port = free_port()
    proc = subprocess.Popen(
        [str(KGP), "mcp", "--http", "--port", str(port)],
        env=kgp_env(settings, KGP_API_KEY=KEY),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        wait_http(url, proc)
        refused = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert refused.status_code == 401, refused.text
        assert refused.headers["content-type"].startswith("application/problem+json")
        big = httpx.post(
            url,
            content=b"x" * 20_000_000,
            headers={"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"},
            timeout=60,
        )
        assert big.status_code == 413, big.text[:500]

        async def main() -> None:
            headers = {"Authorization": f"Bearer {KEY}"}
            async with create_mcp_http_client(headers=headers) as http:
                async with Client(streamable_http_client(url, http_client=http)) as client:
                    await _exercise(client, _expected(sdk))

        asyncio.run(asyncio.wait_for(main(), timeout=300))
    finally:
        out, err = stop(proc)
    assert KEY not in out and KEY not in err
    assert "Traceback" not in err, err[-3000:]
