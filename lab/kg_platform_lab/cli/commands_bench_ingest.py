"""``kgp lab bench ingest`` and ``kgp lab bench ingest-growth``: ingestion throughput benches."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from kg_platform.cli.lazy import get_settings
from kg_platform_lab.cli.bench import bench_group


def register(app: typer.Typer) -> None:
    bench_app = bench_group(app)
    bench_app.command("ingest")(bench_ingest)
    bench_app.command("ingest-growth")(bench_ingest_growth)
    bench_app.command("ingest-engines")(bench_ingest_engines)


def bench_ingest(
    limit: int = typer.Option(
        20, "--limit", help="questions of the QA file whose paragraphs are ingested"
    ),
    qa_file: Path = typer.Option(
        None, "--qa-file", help="QA jsonl (default: $KGP_LAB__BENCH_DIR/dev/hotpotqa.jsonl)"
    ),
    documents: list[Path] = typer.Option(None, "--documents", help="also ingest these files"),
    peer: bool = typer.Option(
        False,
        "--peer",
        help="also ingest the same paragraphs with "
        "langchain-neo4j's Neo4jVector.from_texts (extra: peers) and "
        "compare rates and graph sizes",
    ),
    entities: bool = typer.Option(
        False,
        "--entities",
        help="also ingest the same paragraphs with the NLP distilled layer on and print the "
        "time ratio with / without (needs the nlp extra)",
    ),
    writer_only: bool = typer.Option(
        False,
        "--writer-only",
        help="plan and embed first (one worker's rate), then time only the Neo4j writer: "
        "sources/pieces per second one primary absorbs and how many workers it keeps busy",
    ),
    as_json: bool = typer.Option(False, "--json", help="print the result as JSON"),
) -> None:
    """Ingestion throughput end to end vs. the embedder alone on the same texts (the ceiling)."""
    if writer_only:
        if peer or documents or entities:
            raise typer.BadParameter("--writer-only takes none of --peer, --documents, --entities")
        from kg_platform_lab.bench.ingest_writer import format_writer_bench, run_writer_bench

        out = run_writer_bench(get_settings(), limit=limit, qa_file=qa_file)
        lines = format_writer_bench(out)
    else:
        from kg_platform_lab.bench.ingest import format_ingest_bench, run_ingest_bench

        out = run_ingest_bench(
            get_settings(),
            limit=limit,
            qa_file=qa_file,
            documents=documents or None,
            peer=peer,
            entities=entities,
        )
        lines = format_ingest_bench(out)
    if as_json:
        typer.echo(json.dumps(out, indent=2))
    else:
        for line in lines:
            typer.echo(line)


def bench_ingest_growth(
    sizes: str = typer.Option("1000,10000", "--sizes", help="corpus sizes in pieces"),
    add: int = typer.Option(5, "--add", help="sources added, one run each, at every size"),
    qa_file: Path = typer.Option(
        None, "--qa-file", help="QA jsonl (default: $KGP_LAB__BENCH_DIR/dev/hotpotqa.jsonl)"
    ),
    as_json: bool = typer.Option(False, "--json", help="print the result as JSON"),
) -> None:
    """Time per added source at growing corpus sizes, next to the embed-only time of its texts."""
    from kg_platform_lab.bench.ingest_growth import run_growth_bench

    try:
        targets = [int(x) for x in sizes.split(",") if x.strip()]
    except ValueError:
        raise typer.BadParameter(
            "--sizes takes comma-separated piece counts, e.g. 1000,10000"
        ) from None
    result = run_growth_bench(get_settings(), sizes=targets, add=add, qa_file=qa_file)
    if as_json:
        typer.echo(json.dumps(result, indent=2))
        return
    typer.echo(
        f"{'pieces':>8} {'full build s':>12} {'per source s':>12} {'embed s':>8} "
        f"{'graph s':>8} {'x embed':>8} {'x smallest':>10}  sync"
    )
    for r in result["sizes"]:
        typer.echo(
            f"{r['pieces']:>8} {r['full_build_s']!s:>12} {r['per_source_s']:>12} "
            f"{r['embed_only_s']:>8} {r['piece_graph_s']:>8} {r['ratio_vs_embed']!s:>8} "
            f"{r['ratio_vs_smallest']!s:>10}  {','.join(r['sync_modes'])}"
        )


def bench_ingest_engines(
    paths: list[Path] = typer.Argument(..., help="files and/or folders to ingest"),
    engines: str = typer.Option("local,ray", "--engines", help="comma-separated, in order"),
    limit: int = typer.Option(None, "--limit", help="only the first N files found"),
    workers: int = typer.Option(None, "--workers", min=1, help="Ray worker actors"),
    as_json: bool = typer.Option(False, "--json", help="print the result as JSON"),
) -> None:
    """The same files ingested in-process and on Ray (needs the ray extra), rates and ratio."""
    from kg_platform_lab.bench.ingest_engines import format_engine_bench, run_engine_bench

    chosen = tuple(e.strip() for e in engines.split(",") if e.strip())
    if not chosen or any(e not in ("local", "ray") for e in chosen):
        raise typer.BadParameter("use local and/or ray", param_hint="--engines")
    out = run_engine_bench(get_settings(), paths, engines=chosen, limit=limit, workers=workers)
    if as_json:
        typer.echo(json.dumps(out, indent=2))
    else:
        for line in format_engine_bench(out):
            typer.echo(line)
