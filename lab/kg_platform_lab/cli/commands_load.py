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
    kill_neo4j_after: float = typer.Option(
        None,
        "--kill-neo4j-after",
        help="--http: run against a Neo4j the benchmark starts itself (temporary, free ports, "
        "the sample documents), SIGKILL it after this many seconds, start it again, and "
        "report the latency of the answers while it was down and the time to the first "
        "success once it is ready (never touches the configured Neo4j)",
    ),
) -> None:
    """Throughput, p50/p95/p99 latency and errors of N concurrent retrieval clients."""
    from kg_platform_lab.bench.load import run_load
    from kg_platform.sdk.platform import KnowledgePlatform

    if kill_neo4j_after is not None:
        _kill_run(clients, seconds, kill_neo4j_after, strategy, select, http, url, corpus, as_json)
        return
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


def _kill_run(
    clients: int,
    seconds: float,
    kill_after: float,
    strategy: str | None,
    select: str | None,
    http: bool,
    url: str | None,
    corpus: str | None,
    as_json: bool,
) -> None:
    from kg_platform.errors import ConfigError
    from kg_platform_lab.bench.load_http import run_kill_load

    if not http or url or corpus:
        raise ConfigError(
            "--kill-neo4j-after runs over HTTP against a Neo4j and a corpus of its own",
            hint="use it with --http, without --url and --corpus",
        )
    summary = run_kill_load(
        clients=clients,
        seconds=seconds,
        kill_after=kill_after,
        strategy=strategy,
        select=select,
        progress=lambda message: typer.echo(message, err=True),
    )
    if as_json:
        typer.echo(json.dumps(summary))
    else:
        _report_kill(summary)
    if summary["other_statuses"] or None in summary["recovery"].values():
        raise typer.Exit(1)


def _report_kill(s: dict[str, Any]) -> None:
    def line(name: str, phase: dict[str, Any]) -> str:
        return (
            f"{name}: {phase['requests']} answers {phase['statuses']}, p50 {phase['p50_ms']} ms, "
            f"p99 {phase['p99_ms']} ms, max {phase['max_ms']} ms"
        )

    down = s["while_down"]
    typer.echo(
        f"{s['clients']} clients over HTTP (kgp serve), {s['strategy']}; Neo4j killed after "
        f"{s['kill_after_s']} s, ready again {s['down_s']} s later"
    )
    typer.echo(line("before the kill", s["before_kill"]))
    typer.echo(
        line("while Neo4j was down", down)
        + f"; first 503 {down['first_503_after_kill_s']} s after the kill"
    )
    typer.echo(line("  of those, sent after the kill", down["sent_after_kill"]))
    typer.echo(line("after it was ready", s["after_ready"]))
    rec = s["recovery"]
    typer.echo(
        f"first 200 after Neo4j was ready: server key {rec['server_key_first_200_after_ready_s']}"
        f" s, graph key {rec['graph_key_first_200_after_ready_s']} s"
    )
    if s["other_statuses"]:
        typer.echo(f"errors: statuses {s['other_statuses']} (0: transport error)")


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
