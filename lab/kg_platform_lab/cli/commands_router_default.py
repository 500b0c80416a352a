"""``kgp lab router levels|collect|train-default``: material for and training of the default routers
shipped in the package, and the level distribution a corpus's router gives on a dataset.
(``kgp router which`` is a product command: cli/commands_retrieve.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from kg_platform.cli.groups import group
from kg_platform.cli.lazy import get_settings

from kg_platform_lab.cli.commands_router import ROUTER_HELP


def register(app: typer.Typer) -> None:
    router_app = group(app, "router", ROUTER_HELP)
    router_app.command("levels")(router_levels)
    router_app.command("collect")(router_collect)
    router_app.command("train-default")(router_train_default)


def _context(corpus: str):
    from kg_platform.sdk.platform import KnowledgePlatform

    return KnowledgePlatform(get_settings()).retrieval_context(corpus)


def router_levels(
    corpus: str = typer.Option(..., "--corpus", help="the corpus whose router is used"),
    dataset: Path = typer.Option(
        ..., "--dataset", exists=True, help="QA .jsonl or a document-QA folder"
    ),
    kind: str = typer.Option("mog", "--kind"),
    limit: int | None = typer.Option(None, "--limit"),
) -> None:
    """The level the corpus's router (own, default or fixed) chooses for each question, counted."""
    import numpy as np

    from kg_platform_lab.evaluation.docqa import is_docqa_folder, load_docqa
    from kg_platform.retrieval.strategies.mog import plan_for
    from kg_platform_lab.routers.training import read_dataset
    from kg_platform_lab.routers.default import level_distribution
    from kg_platform.retrieval.strategies.router import n_levels_for

    if is_docqa_folder(dataset):
        questions = [q.question for q in load_docqa(dataset, limit=limit)]
    else:
        questions = [r["question"] for r in read_dataset(dataset)[:limit]]
    ctx = _context(corpus)
    try:
        vecs = ctx.embedder.embed(questions)
        plans = [plan_for(ctx, corpus, v, kind) for v in vecs]
    finally:
        ctx.graph.close()
    typer.echo(
        json.dumps(
            {
                "corpus": corpus,
                "kind": kind,
                "dataset": str(dataset),
                "questions": len(questions),
                "router": plans[0].router_source if plans else None,
                "version": plans[0].router_version if plans else None,
                "levels": level_distribution(
                    (p.g_r for p in plans), n_levels_for(ctx.settings, kind)
                ),
                "mean_weights": [round(float(x), 4) for x in np.mean([p.w for p in plans], axis=0)]
                if plans
                else [],
            },
            indent=2,
        )
    )


def router_collect(
    corpus: str = typer.Option(..., "--corpus", help="the ingested corpus of the dataset"),
    dataset: Path = typer.Option(
        ...,
        "--dataset",
        exists=True,
        help="QA .jsonl or a document-QA folder (scoped per question)",
    ),
    kind: str = typer.Option("mog", "--kind"),
    out: Path = typer.Option(..., "--out", help="JSONL of per-question level similarities"),
    limit: int | None = typer.Option(None, "--limit"),
) -> None:
    """Soft-label material for default routers: each level's best snippet vs the label."""
    from kg_platform_lab.routers.default import collect_labels

    ctx = _context(corpus)
    try:
        res = collect_labels(ctx, dataset, kind, out, limit=limit, echo=typer.echo)
    finally:
        ctx.graph.close()
    typer.echo(json.dumps(res, indent=2))


def router_train_default(
    labels: list[Path] = typer.Option(
        ..., "--labels", exists=True, help="`kgp lab router collect` outputs (repeatable)"
    ),
    kind: str = typer.Option("mog", "--kind"),
    out: Path = typer.Option(..., "--out", help="router folder to write (weights.npz, meta.json)"),
    exclude: list[str] = typer.Option(
        None, "--exclude", help="leave these datasets out (leave-one-out routers)"
    ),
) -> None:
    """Train a corpus-independent router on several datasets' label records."""
    from kg_platform.embedding import get_embedder
    from kg_platform_lab.routers.default import read_records, train_default

    settings = get_settings()
    meta = train_default(
        read_records(labels),
        kind,
        out,
        settings,
        get_embedder(settings.embedding),
        exclude=exclude or (),
    )
    typer.echo(json.dumps(meta, indent=2))
