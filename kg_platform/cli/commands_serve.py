"""``kgp serve`` (the HTTP API), ``kgp serve key``, ``kgp serve keys add|list|revoke`` (keys
scoped to corpora, kept hashed in the graph) and ``kgp mcp`` (the MCP server).

The servers live in :mod:`kg_platform.serve` and need the ``serve`` extra; this module imports
them only when a command runs, so ``kgp --help`` works without it.
"""

from __future__ import annotations

import ipaddress
import json

import typer

from kg_platform.cli.lazy import get_settings


def register(app: typer.Typer) -> None:
    serve = typer.Typer(
        help="The HTTP API over the knowledge graph (OpenAPI at /docs).",
        invoke_without_command=True,
    )
    serve.callback()(serve_api)
    serve.command("key")(serve_key)
    keys = typer.Typer(
        help="API keys scoped to corpora and rights, stored hashed in the graph (shared by "
        "every server on it).",
        no_args_is_help=True,
    )
    keys.command("add")(keys_add)
    keys.command("list")(keys_list)
    keys.command("revoke")(keys_revoke)
    serve.add_typer(keys, name="keys")
    app.add_typer(serve, name="serve")
    app.command("mcp")(mcp)


def _warn_if_exposed(host: str) -> None:
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        typer.secho(
            f"warning: listening on {host}, reachable from other machines; every endpoint but "
            "/v1/health and /v1/ready needs the API key (`kgp serve key`). Put TLS in front.",
            fg=typer.colors.YELLOW,
            err=True,
        )


def serve_api(
    ctx: typer.Context,
    host: str | None = typer.Option(None, "--host", help="listen address (default: 127.0.0.1)"),
    port: int | None = typer.Option(None, "--port", help="port (default: KGP_SERVE__PORT, 8765)"),
) -> None:
    """Serve the HTTP API: search, ask, ingest, runs, corpora, explain, health."""
    if ctx.invoked_subcommand is not None:
        return
    from kg_platform.serve import require_serve_extra

    require_serve_extra()
    import uvicorn

    from kg_platform.sdk.platform import KnowledgePlatform
    from kg_platform.serve.app import build_app
    from kg_platform.serve.auth import api_key

    settings = get_settings()
    host = host or settings.serve.host
    port = settings.serve.port if port is None else port
    _warn_if_exposed(host)
    app = build_app(KnowledgePlatform(settings), key=api_key(settings))
    typer.echo(
        f"kgp serve: http://{host}:{port} (OpenAPI: /docs); the API key: `kgp serve key`",
        err=True,
    )
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)


def serve_key() -> None:
    """Print the API key (made on first use in the data dir, mode 0600; KGP_API_KEY wins)."""
    from kg_platform.serve.auth import api_key

    typer.echo(api_key(get_settings()))


def keys_add(
    name: str = typer.Argument(..., help="the key's name (letters, digits, . _ -)"),
    corpora: str = typer.Option(
        ..., "--corpora", help="corpora it may use, comma-separated: names or globs ('*': all)"
    ),
    rights: str = typer.Option(
        "read",
        "--rights",
        help="read (search, explain, ask, sources, runs, corpora), write (also ingest, upload, "
        "drop) or admin (also keys)",
    ),
) -> None:
    """Make a key; it is printed once, as the last line (only its hash is stored)."""
    from kg_platform.cli.lazy import knowledge_platform
    from kg_platform.serve.keys import KeyStore

    with knowledge_platform() as kp:
        key, created = KeyStore(kp.graph).add(name, corpora.split(","), rights)
    typer.echo(
        f"key {name!r} ({rights} on {corpora}) created {created}; it is shown only now, "
        "keep it (clients send 'Authorization: Bearer KEY'):",
        err=True,
    )
    typer.echo(key)


def keys_list(
    as_json: bool = typer.Option(False, "--json", help="machine-readable output"),
) -> None:
    """Every key: name, corpora, rights, created, revoked (never a key or its hash)."""
    from kg_platform.cli.lazy import knowledge_platform
    from kg_platform.serve.keys import KeyStore

    with knowledge_platform() as kp:
        rows = KeyStore(kp.graph).list()
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        typer.echo("no API keys in the graph (`kgp serve keys add NAME --corpora A,B` makes one)")
        return
    table = [
        [r["name"], ",".join(r["corpora"]), r["rights"], r["created"], r["revoked_at"] or "-"]
        for r in rows
    ]
    header = ["name", "corpora", "rights", "created", "revoked"]
    widths = [max(len(h), *(len(row[i]) for row in table)) for i, h in enumerate(header)]
    for row in [header, *table]:
        typer.echo("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip())


def keys_revoke(name: str = typer.Argument(..., help="the key's name")) -> None:
    """Revoke a key: every server on this graph refuses it within a second."""
    from kg_platform.cli.lazy import knowledge_platform
    from kg_platform.serve.keys import KeyStore

    with knowledge_platform() as kp:
        when = KeyStore(kp.graph).revoke(name)
    typer.echo(f"key {name!r} revoked at {when}")


def mcp(
    http: bool = typer.Option(False, "--http", help="streamable HTTP at /mcp instead of stdio"),
    host: str | None = typer.Option(None, "--host", help="--http: listen address (127.0.0.1)"),
    port: int | None = typer.Option(None, "--port", help="--http: port (KGP_SERVE__MCP_PORT)"),
) -> None:
    """Serve MCP (tools search, ask, list_corpora, get_source, explain; corpora resources)."""
    from kg_platform.serve import require_serve_extra

    require_serve_extra()
    from kg_platform.sdk.platform import KnowledgePlatform

    settings = get_settings()
    platform = KnowledgePlatform(settings)
    if not http:
        from kg_platform.serve.mcp_server import run_stdio

        run_stdio(platform)
        return
    import uvicorn

    from kg_platform.serve.auth import api_key
    from kg_platform.serve.mcp_server import mcp_http_app

    host = host or settings.serve.host
    port = settings.serve.mcp_port if port is None else port
    _warn_if_exposed(host)
    app = mcp_http_app(platform, key=api_key(settings), host=host)
    typer.echo(f"kgp mcp: http://{host}:{port}/mcp; the API key: `kgp serve key`", err=True)
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
