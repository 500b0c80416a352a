"""``kgp lab bench cli``: one ``kgp retrieve`` as a whole process, against ``kgp --help``."""

from __future__ import annotations

import json

import typer

from kg_platform_lab.cli.bench import bench_group


def register(app: typer.Typer) -> None:
    bench_group(app).command("cli")(bench_cli)


def bench_cli(
    question: str = typer.Option(
        None, "--question", help="the question to retrieve for (default: the README's)"
    ),
    corpus: str = typer.Option("samples", "--corpus", help="the corpus to retrieve from"),
    strategy: str | None = typer.Option(None, "--strategy", "-s", help="passed to kgp retrieve"),
    select: str | None = typer.Option(None, "--select", help="passed to kgp retrieve"),
    runs: int = typer.Option(5, "--runs", min=1, help="runs of each command; medians count"),
    as_json: bool = typer.Option(False, "--json", help="print the result as JSON"),
) -> None:
    """CPU seconds (user+sys) and wall time of one `kgp retrieve` as a whole process, median of
    --runs, against `kgp --help` timed in the same run; and whether it imported torch or spaCy."""
    from kg_platform_lab.bench.cli import DEFAULT_QUESTION, format_cli_bench, run_cli_bench

    args = ["retrieve", question or DEFAULT_QUESTION, "--corpus", corpus]
    if strategy:
        args += ["--strategy", strategy]
    if select:
        args += ["--select", select]
    try:
        out = run_cli_bench(args, runs=runs)
    except RuntimeError as exc:
        typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
        raise typer.Exit(1) from exc
    if as_json:
        typer.echo(json.dumps(out, indent=2))
    else:
        for line in format_cli_bench(out):
            typer.echo(line)
