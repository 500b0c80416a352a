"""``kgp lab compare``: the paired difference of two ``kgp lab eval --per-question`` files, with its
bootstrap interval (see :mod:`kg_platform_lab.evaluation.compare`)."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    app.command("compare")(compare_command)


def compare_command(
    file_a: Path = typer.Argument(..., help="per-question JSONL of the reference run (A)"),
    file_b: Path = typer.Argument(..., help="per-question JSONL of the run compared with it (B)"),
    strategy: str = typer.Option(
        None, "--strategy", "-s", help="the strategy to compare in both files"
    ),
    strategy_a: str = typer.Option(None, "--strategy-a", help="A's strategy (overrides -s)"),
    strategy_b: str = typer.Option(None, "--strategy-b", help="B's strategy (overrides -s)"),
    metric: str = typer.Option(
        None,
        "--metric",
        help="per-question field to compare (default: evidence_recall, else paragraph_recall)",
    ),
    target: float = typer.Option(
        None, "--target", help="also report how often a resample's B - A reaches this"
    ),
    cluster: str = typer.Option(
        None,
        "--cluster",
        help="resample whole clusters of questions sharing this field (doc_id: one paper's "
        "questions move together)",
    ),
    resamples: int = typer.Option(5000, "--resamples", help="bootstrap resamples"),
    confidence: float = typer.Option(0.95, "--confidence", help="interval coverage"),
    seed: int = typer.Option(0, "--seed", help="random seed (the same seed, the same interval)"),
    json_out: Path = typer.Option(None, "--json", help="write the comparison as JSON here"),
) -> None:
    """Compare two kgp lab eval --per-question files on the questions both answered: mean
    difference B - A with a paired bootstrap interval, wins / losses / ties."""
    import json

    from kg_platform_lab.evaluation.compare import compare_files

    name_a, name_b = strategy_a or strategy, strategy_b or strategy
    c = compare_files(
        file_a,
        file_b,
        strategy_a=name_a,
        strategy_b=name_b,
        metric=metric,
        resamples=resamples,
        confidence=confidence,
        seed=seed,
        target=target,
        cluster=cluster,
    )
    label_a = f"{name_a} in {file_a.name}" if name_a else file_a.name
    label_b = f"{name_b} in {file_b.name}" if name_b else file_b.name
    typer.echo(f"{c.metric}, {c.n} questions in both: A = {label_a}, B = {label_b}")
    unit = f" of {c.clusters} {cluster} clusters" if c.clusters is not None else ""
    typer.echo(
        f"  A {c.mean_a:.3f}   B {c.mean_b:.3f}   B - A {c.diff:+.3f}   "
        f"{c.confidence:.0%} interval [{c.ci_low:+.3f}, {c.ci_high:+.3f}]   "
        f"({c.resamples:,} paired resamples{unit}, seed {c.seed})"
    )
    typer.echo(f"  B ahead on {c.wins}, behind on {c.losses}, tied on {c.ties} questions")
    if c.target is not None and c.reach_target is not None:
        typer.echo(f"  resamples with B - A >= {c.target:+.3f}: {c.reach_target:.1%}")
    if json_out:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(c.to_dict(), indent=2) + "\n", encoding="utf-8")
