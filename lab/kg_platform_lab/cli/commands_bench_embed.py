"""``kgp lab bench embed``: the embedder's speed at several ``embedding.batch_tokens`` values."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from kg_platform.cli.lazy import get_settings
from kg_platform_lab.cli.bench import bench_group


def register(app: typer.Typer) -> None:
    bench_group(app).command("embed")(bench_embed)


def bench_embed(
    limit: int = typer.Option(
        50, "--limit", help="questions of the QA file whose paragraphs are embedded"
    ),
    qa_file: Path = typer.Option(
        None, "--qa-file", help="QA jsonl (default: $KGP_LAB__BENCH_DIR/dev/hotpotqa.jsonl)"
    ),
    values: str = typer.Option(
        "512,1024,2048", "--values", help="embedding.batch_tokens values to time, comma-separated"
    ),
    repeats: int = typer.Option(2, "--repeats", help="runs per measurement; the fastest counts"),
    as_json: bool = typer.Option(False, "--json", help="print the result as JSON"),
) -> None:
    """Embedding speed at several embedding.batch_tokens values against unbounded calls (the
    same texts, same run): paragraphs, chunk-sized texts and the late rerank's lists."""
    from kg_platform_lab.bench.embed import format_embed_bench, run_embed_bench
    from kg_platform_lab.bench.ingest import default_qa_file

    try:
        chosen = [int(v) for v in values.split(",") if v.strip()]
    except ValueError as exc:
        raise typer.BadParameter(f"--values takes integers separated by commas ({exc})") from exc
    if not chosen or min(chosen) < 1 or repeats < 1:
        raise typer.BadParameter("--values needs integers >= 1 and --repeats >= 1")
    out = run_embed_bench(
        get_settings(),
        qa_file=qa_file or default_qa_file(),
        limit=limit,
        values=chosen,
        repeats=repeats,
    )
    if as_json:
        typer.echo(json.dumps(out, indent=2))
    else:
        for line in format_embed_bench(out):
            typer.echo(line)
