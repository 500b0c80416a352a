"""The MCP server of ``kgp mcp``: the platform's read verbs as MCP tools and its corpora as
resources, for LLM agents (Claude Desktop, IDEs, agent frameworks).

Tools: ``search``, ``ask``, ``list_corpora``, ``get_source``, ``explain``, ``cancel_run``; resources:
``kgp://corpora`` (every corpus) and ``kgp://corpora/{name}`` (one). Each is one call of the
same :class:`~kg_platform.serve.service.Service` the HTTP API uses. Over stdio the client that
spawned the process is trusted (as with any local tool); over streamable HTTP the same gate as
the HTTP API applies (key, rate and size limits).

A platform error reaches the model as a tool error carrying the platform's message and hint,
so the agent can correct its call (a misspelt corpus, an unknown strategy).
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError

from kg_platform.errors import KGPError
from kg_platform.serve.problems import Problem, public_error
from kg_platform.serve.service import Service

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from kg_platform.sdk.platform import KnowledgePlatform

__all__ = ["TOOLS", "build_mcp", "mcp_http_app"]

TOOLS = ("search", "ask", "list_corpora", "get_source", "explain", "cancel_run")
T = TypeVar("T")

INSTRUCTIONS = (
    "kg-platform answers questions from documents ingested into a Neo4j knowledge graph. "
    "Call list_corpora to see what is there, search for ranked evidence passages (each with "
    "its source title and score), ask for an answer with citations, get_source to read one "
    "document's sections and chunks, and explain to see why a passage was found."
)


async def _tool(call: Awaitable[T]) -> T:
    try:
        return await call
    except (KGPError, Problem) as exc:
        raise ToolError(_message(exc)) from exc
    except Exception as exc:  # a bug: logged with its traceback, never sent
        raise ToolError(public_error(exc).message()) from exc


def _message(exc: KGPError | Problem) -> str:
    """What the agent reads: the platform's message and hint, or a generic one with the request
    id for errors whose text is internal (logged under that id: serve.problems.public_error)."""
    return public_error(exc).message()


def build_mcp(service: Service) -> MCPServer[Any]:
    """An MCP server whose tools call ``service``."""
    server: MCPServer[Any] = MCPServer("kg-platform", instructions=INSTRUCTIONS)

    @server.tool()
    async def search(
        query: str,
        corpus: str | None = None,
        k: int = 5,
        strategy: str | None = None,
        scope: list[str] | None = None,
        select: str | None = None,
    ) -> dict[str, Any]:
        """Ranked evidence passages for a question: each item has its text, score, source
        title, section and page. corpus: one corpus (default: every corpus); strategy: a
        retrieval strategy (default: the platform's); scope: only these documents (titles,
        file names or source ids)."""
        return await _tool(
            service.search(query, corpus=corpus, k=k, strategy=strategy, scope=scope, select=select)
        )

    @server.tool()
    async def ask(
        question: str,
        corpus: str | None = None,
        mode: Literal["auto", "factual", "decompose"] = "auto",
        scope: list[str] | None = None,
        context_tokens: int | None = None,
    ) -> dict[str, Any]:
        """An answer with numbered citations (by the platform's configured LLM), or the best
        evidence sentences when the platform has no LLM. context_tokens: the LLM reads the
        best chunks within this many tokens instead of the platform's adaptive cut."""
        return await _tool(
            service.ask(
                question, corpus=corpus, mode=mode, scope=scope, context_tokens=context_tokens
            )
        )

    @server.tool()
    async def list_corpora() -> dict[str, Any]:
        """Every corpus with its counts of sources, sections, chunks and pieces."""
        return {"corpora": await _tool(service.corpora())}

    @server.tool()
    async def get_source(source: str, corpus: str | None = None, level: int = 1) -> dict[str, Any]:
        """One document's sections in order with their chunks (level 1: the finest). source:
        its title, file name, path or source id (as search items give in source_id)."""
        return await _tool(service.source(source, corpus, level))

    @server.tool()
    async def explain(
        query: str,
        corpus: str | None = None,
        k: int = 5,
        strategy: str | None = None,
        item_id: str | None = None,
    ) -> dict[str, Any]:
        """Why each search result was found (the query, score breakdown and graph path) and a
        Cypher query that shows their subgraph in Neo4j Browser; item_id: only that item."""
        return await _tool(
            service.explain(query, corpus=corpus, k=k, strategy=strategy, item_id=item_id)
        )

    @server.tool()
    async def cancel_run(run_id: str) -> dict[str, Any]:
        """Stop an ingestion run (its run id, or the task id an upload returned): it ends as
        'cancelled' at its next file, every document written whole or not at all; an error
        when it has already ended."""
        return await _tool(service.cancel_run(run_id))

    @server.resource("kgp://corpora", mime_type="application/json")
    async def corpora_resource() -> list[dict[str, Any]]:
        """Every corpus of the knowledge graph with its counts."""
        return await _resource(service.corpora())

    @server.resource("kgp://corpora/{name}", mime_type="application/json")
    async def corpus_resource(name: str) -> dict[str, Any]:
        """One corpus and its counts."""
        for info in await _resource(service.corpora()):
            if info["name"] == name:
                return info
        raise ResourceError(f"there is no corpus {name!r} (list them at kgp://corpora)")

    return server


async def _resource(call: Awaitable[T]) -> T:
    try:
        return await call
    except (KGPError, Problem) as exc:
        raise ResourceError(_message(exc)) from exc
    except Exception as exc:  # a bug: logged with its traceback, never sent
        raise ResourceError(public_error(exc).message()) from exc


def mcp_http_app(platform: "KnowledgePlatform", *, key: str | None, host: str) -> "Starlette":
    """The streamable-HTTP MCP app at ``/mcp`` behind the same gate as the HTTP API (the
    server's key and the graph's keys); each tool call runs as its request's key."""
    from kg_platform.serve.boundary import RequestIds
    from kg_platform.serve.keys import key_ring
    from kg_platform.serve.limits import AuthFailures, Gate, GateRules, TokenBuckets
    from kg_platform.serve.principal import McpPrincipal

    cfg = platform.settings.serve
    service = Service(platform)
    server = build_mcp(service)
    server.middleware.insert(0, McpPrincipal(local=None))
    app = server.streamable_http_app(host=host)
    app.add_middleware(
        Gate,
        rules=GateRules(
            keys=key_ring(platform, key),
            buckets=TokenBuckets(cfg.rate_per_s, cfg.rate_burst),
            failures=AuthFailures(cfg.auth_fail_limit, cfg.auth_fail_window_s),
            max_body_bytes=cfg.max_body_bytes,
        ),
    )
    app.add_middleware(RequestIds)  # outermost: every answer, the gate's too, has its id
    return app


def run_stdio(platform: "KnowledgePlatform") -> None:
    """Serve MCP over this process's stdin/stdout until the client closes them."""
    from kg_platform.serve.principal import LOCAL, McpPrincipal

    service = Service(platform)
    server = build_mcp(service)
    server.middleware.insert(0, McpPrincipal(local=LOCAL))  # the spawning client is trusted
    try:
        server.run("stdio")
    finally:
        service.close()
