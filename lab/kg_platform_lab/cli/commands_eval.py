"""``kgp lab eval``: score retrieval strategies on a QA file with gold supporting facts."""

from __future__ import annotations

from pathlib import Path

import typer

from kg_platform.errors import EvaluationError


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_command)


def eval_command(
    dataset: Path = typer.Option(
        None,
        "--dataset",
        "-d",
        help="QA .jsonl in the bench/dev schema, or a document-QA "
        "folder (papers/ + questions.jsonl, like bench/longdoc)",
    ),
    strategy: str = typer.Option(
        "bm25,vector,hybrid",
        "--strategy",
        "-s",
        help="comma-separated strategy names (see --list); 'default' is the path a user gets with no flags (retrieve.strategy + retrieve.select)",
    ),
    k: int = typer.Option(5, "--k", help="results kept per question"),
    budget_tokens: int = typer.Option(
        None, "--budget-tokens", help="cut each ranking at N context tokens instead of at k"
    ),
    limit: int = typer.Option(None, "--limit", help="evaluate only the first N questions"),
    json_out: Path = typer.Option(None, "--json", help="write the JSON report here"),
    per_question: Path = typer.Option(
        None, "--per-question", help="write per-question ranked ids and hits (JSONL)"
    ),
    plot: Path = typer.Option(None, "--plot", help="write recall vs context tokens (PNG)"),
    corpus: str = typer.Option(None, "--corpus", help="corpus name (default: qa-<dataset>)"),
    corpus_limit: int = typer.Option(
        None,
        "--corpus-limit",
        help="ingest only the first N questions' paragraphs (small CI corpora; default: all)",
    ),
    ingest: bool = typer.Option(
        True,
        "--ingest/--no-ingest",
        help="ingest the file's paragraphs first (unchanged ones are skipped)",
    ),
    select: str = typer.Option(
        None, "--select", help="post-processor: sage (rerank + gradient cut) or late (rerank)"
    ),
    fetch_k: int = typer.Option(
        None, "--fetch-k", help="items asked from each strategy before the cut"
    ),
    scope: str = typer.Option(
        None,
        "--scope",
        help="document QA: 'document' (default: retrieve inside the "
        "question's document) or 'corpus' (all documents pooled)",
    ),
    held_out: Path = typer.Option(
        None,
        "--held-out",
        help="score only questions held out from training: leave out those whose id (or "
        "document id) is listed in this file, e.g. the ids the shipped routers were trained "
        "on (lab/results/2026-11-24/default-routers/longdoc-trained-ids.txt)",
    ),
    distractors: Path = typer.Option(
        None,
        "--distractors",
        help="a passage JSONL added to the pooled corpus (passages already in it by doc_id or "
        "title and text are skipped), e.g. bench/distractors/2wikimultihopqa-hipporag2.jsonl; "
        "the default corpus is then qa-<dataset>+<file stem>",
    ),
    list_only: bool = typer.Option(False, "--list", help="list the known strategies and exit"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress output"),
) -> None:
    """Ingest a QA file's paragraphs as one pooled corpus (or a document-QA folder's documents),
    run every question through each strategy and report supporting-fact (or evidence) recall,
    MRR, context tokens and latency."""
    from kg_platform.retrieval.base import list_strategies

    if list_only:
        for name, description in list_strategies().items():
            typer.echo(f"{name:32s} {description}")
        return
    if dataset is None:
        raise EvaluationError(
            "--dataset is required",
            hint="e.g. kgp lab eval --dataset ../shared/bench/dev/hotpotqa.jsonl",
        )
    names = [s.strip() for s in strategy.split(",") if s.strip()]
    from kg_platform_lab.evaluation.harness import DEFAULT_PATH

    known = {**list_strategies(), DEFAULT_PATH: "the default path a user gets with no flags"}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise EvaluationError(
            f"unknown strategy {', '.join(unknown)}",
            hint=f"known: {', '.join(known)} (kgp lab eval --list)",
        )

    from rich.console import Console

    from kg_platform.config import get_settings
    from kg_platform_lab.evaluation.harness import EvalConfig, run_evaluation
    from kg_platform_lab.evaluation.report import render_table, write_json, write_per_question
    from kg_platform.sdk.platform import KnowledgePlatform

    console = Console(stderr=True)

    def progress(name: str, done: int, total: int) -> None:
        if not quiet and (done == total or done % 25 == 0):
            console.print(f"  {name}: {done}/{total}")

    cfg = EvalConfig(
        dataset=dataset,
        strategies=names,
        k=k,
        budget_tokens=budget_tokens,
        limit=limit,
        corpus=corpus,
        corpus_limit=corpus_limit,
        ingest=ingest,
        select=select,
        fetch_k=fetch_k,
        scope=scope,
        held_out=held_out,
        distractors=distractors,
    )
    with KnowledgePlatform(get_settings()) as kp:
        result = run_evaluation(cfg, kp.graph, kp.embedder, kp.settings, progress=progress)
    report = result.to_json()
    out = Console()
    if not out.is_terminal:  # logs and pipes: do not squeeze the table to 80 columns
        out = Console(width=160)
    out.print(render_table(report))
    for name, run in result.runs.items():
        if run.errors:
            console.print(
                f"[yellow]{name}: {len(run.errors)} questions failed, e.g. {run.errors[0]}[/yellow]"
            )
    if json_out:
        write_json(report, json_out)
    if per_question:
        write_per_question(result, per_question)
    if plot:
        from kg_platform_lab.evaluation.plot import plot_report

        plot_report(report, plot)
    if result.missing_documents:
        console.print(
            f"[yellow]{result.missing_documents} questions skipped: their document "
            f"is not in corpus {cfg.corpus} (drop --no-ingest)[/yellow]"
        )
    if result.excluded_trained:
        console.print(
            f"{result.excluded_trained} questions left out: listed in {held_out} (seen in training)"
        )
    scope_note = f", scope {cfg.scope}" if cfg.document_qa else ""
    typer.echo(
        f"wall time {result.wall_s:.1f}s (corpus {cfg.corpus}, "
        f"{result.corpus_chunks} level-2 chunks{scope_note})"
    )
