"""``kgp lab bench load``: concurrent retrievals through the SDK against the one (loopback) server."""

from __future__ import annotations

import json
from typing import Any

import typer


def register(app: typer.Typer) -> None:
    from kg_platform_lab.cli.bench import bench_group

    bench_group(app).command("load")(bench_load)


def bench_load(
    clients: int = typer.Option(8, "--clients", help="concurrent client threads (1..64)"),
    seconds: float = typer.Option(20.0, "--seconds", help="duration (at most 600)"),
    strategy: str = typer.Option(
        None, "--strategy", help="retrieval strategy (default: KGP_RETRIEVE__STRATEGY)"
    ),
    corpus: str = typer.Option(None, "--corpus", help="corpus to query (default: all)"),
    select: str = typer.Option(
        None,
        "--select",
        help="none | sage | late | auto (default: KGP_RETRIEVE__SELECT, auto = the late rerank)",
    ),
    as_json: bool = typer.Option(False, "--json", help="one JSON object instead of text"),
    http: bool = typer.Option(
        False, "--http", help="send the searches to `kgp serve` (started here unless --url)"
    ),
    url: str = typer.Option(
        None, "--url", help="--http: a running loopback `kgp serve` (its rate limit applies)"
    ),
) -> None:
    """Throughput, p50/p95/p99 latency and errors of N concurrent retrieval clients."""
    from kg_platform_lab.bench.load import run_load
    from kg_platform.sdk.platform import KnowledgePlatform

    if http:
        summary = _http_summary(clients, seconds, strategy, corpus, select, url)
        _report(summary, as_json)
        return
    with KnowledgePlatform() as kp:
        summary = run_load(
            kp,
            clients=clients,
            seconds=seconds,
            strategy=strategy or kp.settings.retrieve.strategy,
            corpus=corpus,
            select=select,
        ).summary()
    _report(summary, as_json)


def _http_summary(
    clients: int,
    seconds: float,
    strategy: str | None,
    corpus: str | None,
    select: str | None,
    url: str | None,
) -> dict[str, Any]:
    from kg_platform.cli.lazy import get_settings
    from kg_platform_lab.bench.load_http import run_http_load, started_server
    from kg_platform.serve.auth import api_key

    key = api_key(get_settings())
    options = dict(
        clients=clients, seconds=seconds, strategy=strategy, corpus=corpus, select=select
    )
    if url:
        return run_http_load(url, key, **options).summary() | {"transport": "http"}
    with started_server() as base:
        return run_http_load(base, key, **options).summary() | {"transport": "http"}


def _report(summary: dict[str, Any], as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(summary))
        return
    over = "over HTTP (kgp serve), " if summary.get("transport") == "http" else ""
    typer.echo(
        f"{summary['clients']} clients {over}{summary['seconds']} s, {summary['strategy']} "
        f"(select {summary['select']}): "
        f"{summary['requests']} requests, {summary['throughput_rps']} req/s, "
        f"p50 {summary['p50_ms']} ms, p95 {summary['p95_ms']} ms, "
        f"p99 {summary['p99_ms']} ms, errors {summary['errors'] or 0}"
    )
    if summary["errors"]:
        raise typer.Exit(1)
