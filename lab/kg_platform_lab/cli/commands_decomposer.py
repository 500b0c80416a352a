"""``kgp lab decomposer collect``: PIKE-RAG decomposer training data (Algorithms 2 and 3)."""

from __future__ import annotations

from pathlib import Path

import typer

from kg_platform.cli.groups import group
from kg_platform.cli.lazy import get_settings

DECOMPOSER_HELP = "PIKE-RAG decomposer training data (Algorithms 2 and 3)."


def register(app: typer.Typer) -> None:
    group(app, "decomposer", DECOMPOSER_HELP).command("collect")(collect)


def collect(
    dataset: Path = typer.Option(
        ...,
        "--dataset",
        exists=True,
        dir_okay=False,
        help="QA JSONL (bench/dev schema: question, answer, aliases)",
    ),
    out: Path = typer.Option(..., "--out", help="SFT examples (JSONL) to write"),
    corpus: str | None = typer.Option(
        None, help="corpus holding the atomic questions (default: qa-<dataset name>)"
    ),
    limit: int | None = typer.Option(None, help="first N questions only"),
    rounds: int | None = typer.Option(None, help="N rounds per run (default: settings)"),
    attempts: int | None = typer.Option(None, help="runs per question until correct"),
) -> None:
    """Algorithm 2 (UCB context sampling) over a dataset; exports Algorithm 3 SFT examples."""
    from kg_platform.errors import LLMNotConfigured
    from kg_platform.llm.session import open_llm
    from kg_platform.reasoning.candidates import GraphCandidates
    from kg_platform_lab.decomposer.collect import (
        Collector,
        collect_to_jsonl,
        graph_store,
        read_questions,
    )
    from kg_platform.reasoning.evidence import enrich
    from kg_platform.reasoning.llm_steps import LLMSteps
    from kg_platform.sdk.platform import KnowledgePlatform
    from kg_platform_lab.settings import get_lab_settings

    settings = get_settings()
    explore = get_lab_settings().decomposer
    corpus = corpus or f"qa-{dataset.stem}"
    items = read_questions(dataset, limit)
    d = settings.tuning.decomposition
    with KnowledgePlatform(settings) as kp, open_llm(settings) as llm:
        if llm is None:
            raise LLMNotConfigured(
                "Algorithm 2 needs an LLM (propose, select, answer)",
                hint="set KGP_LLM__BASE_URL and KGP_LLM__MODEL, or run `kgp llm serve-local`",
            )
        graph, embedder = kp.graph, kp.embedder
        collector = Collector(
            LLMSteps(llm, max_passage_tokens=settings.tuning.reasoning.max_passage_tokens),
            GraphCandidates(graph, embedder, corpus, f"chunk_embedding_l{d.chunk_level}"),
            max_rounds=rounds or d.max_rounds,
            delta=d.delta,
            delta_explore=explore.delta_explore,
            k_explore=explore.top_k_explore,
            alpha=explore.ucb_alpha,
            attempts=attempts or explore.attempts,
            correct_f1=explore.correct_f1,
            max_proposals=d.max_proposals,
            backup=d.backup_select,
            enrich=lambda ev: enrich(graph, ev),
            store=graph_store(graph, corpus, llm.model),
        )
        report = collect_to_jsonl(collector, items, out, progress=typer.echo)
    typer.echo(report.summary())
    typer.echo(f"wrote {out}")
