"""``kgp lab bench load``: concurrent retrievals through the SDK against the one (loopback) server."""

from __future__ import annotations

import json

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
) -> None:
    """Throughput, p50/p95/p99 latency and errors of N concurrent retrieval clients."""
    from kg_platform_lab.bench.load import run_load
    from kg_platform.sdk.platform import KnowledgePlatform

    with KnowledgePlatform() as kp:
        summary = run_load(
            kp,
            clients=clients,
            seconds=seconds,
            strategy=strategy or kp.settings.retrieve.strategy,
            corpus=corpus,
            select=select,
        ).summary()
    if as_json:
        typer.echo(json.dumps(summary))
        return
    typer.echo(
        f"{summary['clients']} clients, {summary['seconds']} s, {summary['strategy']} "
        f"(select {summary['select']}): "
        f"{summary['requests']} requests, {summary['throughput_rps']} req/s, "
        f"p50 {summary['p50_ms']} ms, p95 {summary['p95_ms']} ms, "
        f"p99 {summary['p99_ms']} ms, errors {summary['errors'] or 0}"
    )
    if summary["errors"]:
        raise typer.Exit(1)
