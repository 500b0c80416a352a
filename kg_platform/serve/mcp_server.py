"""The MCP server of ``kgp mcp``: the platform's read verbs as MCP tools and its corpora as
resources, for LLM agents (Claude Desktop, IDEs, agent frameworks).

Tools: ``search``, ``ask``, ``list_corpora``, ``get_source``, ``explain``, ``cancel_run``; resources:
``kgp://corpora`` (every corpus) and ``kgp://corpora/{name}`` (one). Each is one call of the
same :class:`~kg_platform.serve.service.Service` the HTTP API uses. Over stdio the client that
spawned the process is trusted (as with any local tool); over streamable HTTP the same gate as
the HTTP API applies (key, rate and size limits).

A platform error reaches the model as a tool error carrying the platform's message and hint,
so the agent can correct its call (a misspelt corpus, an unknown strategy). Every tool's
arguments are checked by the request models of :mod:`kg_platform.requests` alone (their JSON
schemas are the tools' input schemas, bounds included), so an out-of-bounds or unknown argument
is a tool error naming the field and its bound, as at every other door.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from pydantic import ConfigDict

from kg_platform.errors import KGPError
from kg_platform.requests import (
    AskRequest,
    CancelRunRequest,
    CorporaRequest,
    ExplainRequest,
    Request,
    SearchRequest,
    SourceRequest,
)
from kg_platform.serve.problems import Problem, public_error
from kg_platform.serve.service import Service

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from kg_platform.sdk.platform import KnowledgePlatform

__all__ = ["TOOLS", "build_mcp", "mcp_http_app"]

TOOLS = ("search", "ask", "list_corpora", "get_source", "explain", "cancel_run")
T = TypeVar("T")
R = TypeVar("R", bound=Request)

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


class _Arguments(ArgModelBase):
    """A tool's arguments as the client sent them (MCP's own argument model would drop the
    unknown ones); the tool checks them with its request model."""

    model_config = ConfigDict(extra="allow")

    def model_dump_one_level(self) -> dict[str, Any]:
        return {"arguments": dict(self.model_extra or {})}


def _contract_tool(fn: Callable[..., Any], model: type[Request]) -> Tool:
    """``fn(arguments)`` as a tool whose input schema is ``model``'s JSON schema."""
    tool = Tool.from_function(fn)
    tool.fn_metadata.arg_model = _Arguments
    tool.parameters = model.model_json_schema()
    return tool


def _request(model: type[R], arguments: dict[str, Any]) -> R:
    """``arguments`` checked by ``model``; a list sent as a JSON string (as some clients do)
    is read as the list. An :class:`~kg_platform.errors.InvalidRequest` becomes a tool error."""
    lists = {
        name
        for name, prop in model.model_json_schema().get("properties", {}).items()
        if "array" in json.dumps(prop)
    }
    given = dict(arguments)
    for name in lists & set(given):
        if isinstance(given[name], str) and given[name].lstrip().startswith("["):
            try:
                given[name] = json.loads(given[name])
            except ValueError:
                pass  # left for the model to refuse
    try:
        return model.parse(given)
    except KGPError as exc:
        raise ToolError(_message(exc)) from exc


def build_mcp(service: Service) -> MCPServer[Any]:
    """An MCP server whose tools call ``service``."""

    async def search(arguments: dict[str, Any]) -> dict[str, Any]:
        """Ranked evidence passages for a question: each item has its text, score, source
        title, section and page. corpus: one corpus (default: every corpus); k: how many
        (1..200, default 5); strategy: a retrieval strategy (default: the platform's); scope:
        only these documents (titles, file names or source ids)."""
        req = _request(SearchRequest, arguments)
        return await _tool(
            service.search(
                req.query,
                corpus=req.corpus,
                k=req.k,
                strategy=req.strategy,
                scope=req.scope,
                select=req.select,
                record=req.record,
                max_tokens=req.max_tokens,
            )
        )

    async def ask(arguments: dict[str, Any]) -> dict[str, Any]:
        """An answer with numbered citations (by the platform's configured LLM), or the best
        evidence sentences when the platform has no LLM. max_tokens (or context_tokens): the
        LLM reads the best chunks within this many tokens instead of the platform's adaptive
        cut."""
        req = _request(AskRequest, arguments)
        return await _tool(
            service.ask(
                req.question,
                corpus=req.corpus,
                strategy=req.strategy,
                mode=req.mode,
                scope=req.scope,
                context_tokens=req.max_tokens,
                feedback=req.feedback,
            )
        )

    async def get_source(arguments: dict[str, Any]) -> dict[str, Any]:
        """One document's sections in order with their chunks (level 1: the finest, up to
        6). source: its title, file name, path or source id (as search items give in
        source_id)."""
        req = _request(SourceRequest, arguments)
        return await _tool(service.source(req.source, req.corpus, req.level))

    async def explain(arguments: dict[str, Any]) -> dict[str, Any]:
        """Why each search result was found (the query, score breakdown and graph path) and a
        Cypher query that shows their subgraph in Neo4j Browser; item_id: only that item."""
        req = _request(ExplainRequest, arguments)
        return await _tool(
            service.explain(
                req.query,
                corpus=req.corpus,
                k=req.k,
                strategy=req.strategy,
                scope=req.scope,
                select=req.select,
                item_id=req.item_id,
            )
        )

    async def list_corpora(arguments: dict[str, Any]) -> dict[str, Any]:
        """Every corpus with its counts of sources, sections, chunks and pieces."""
        _request(CorporaRequest, arguments)
        return {"corpora": await _tool(service.corpora())}

    async def cancel_run(arguments: dict[str, Any]) -> dict[str, Any]:
        """Stop an ingestion run (its run id, or the task id an upload returned): it ends as
        'cancelled' at its next file, every document written whole or not at all; an error
        when it has already ended."""
        req = _request(CancelRunRequest, arguments)
        return await _tool(service.cancel_run(req.run_id))

    tools = [
        _contract_tool(search, SearchRequest),
        _contract_tool(ask, AskRequest),
        _contract_tool(list_corpora, CorporaRequest),
        _contract_tool(get_source, SourceRequest),
        _contract_tool(explain, ExplainRequest),
        _contract_tool(cancel_run, CancelRunRequest),
    ]
    server: MCPServer[Any] = MCPServer("kg-platform", instructions=INSTRUCTIONS, tools=tools)

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
            keys=key_ring(platform, key, service.graph_health),
            buckets=TokenBuckets(cfg.rate_per_s, cfg.rate_burst),
            failures=AuthFailures(
                platform.settings.tuning.serve.auth_fail_limit,
                platform.settings.tuning.serve.auth_fail_window_s,
            ),
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
