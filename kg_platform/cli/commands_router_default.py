"""``kgp router which|levels|collect|train-default``: the default routers (shipped in the package)
and the routers a corpus actually uses."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import typer

from kg_platform.cli.commands_retrieve import _context, router_app


@router_app.command("which")
def router_which(corpus: str = typer.Option(..., "--corpus"),
                 as_json: bool = typer.Option(False, "--json")) -> None:
    """Which MoG and MoGG router a corpus uses: its own, the default (shipped), or a fixed level."""
    from kg_platform.retrieval.router import router_for
    from kg_platform.retrieval.router_default import n_levels_for

    ctx = _context(corpus)
    out = {}
    try:
        for kind in ("mog", "mogg"):
            router, source = router_for(ctx.graph, ctx.settings, corpus, kind,
                                        n_levels_for(ctx.settings, kind))
            cfg = ctx.settings.mog
            out[kind] = {"source": source,
                         "version": router.version if router else None,
                         "path": str(router.path) if router else None,
                         "trained_on": (router.meta.get("trained_on") if router else None),
                         "fixed_level": None if router else (
                             cfg.fixed_level if kind == "mog" else cfg.fixed_mogg_level)}
    finally:
        ctx.graph.close()
    if as_json:
        typer.echo(json.dumps(out, indent=2))
        return
    for kind, r in out.items():
        if r["source"] == "fixed":
            typer.echo(f"{kind}: fixed level {r['fixed_level']} (no router for {corpus!r}, "
                       "default routers off or not matching)")
        elif r["source"] == "default":
            typer.echo(f"{kind}: default router {r['version']} ({r['path']}), trained on "
                       f"{', '.join(r['trained_on'] or [])}")
        else:
            typer.echo(f"{kind}: corpus router {r['version']} ({r['path']})")


@router_app.command("levels")
def router_levels(
    corpus: str = typer.Option(..., "--corpus", help="the corpus whose router is used"),
    dataset: Path = typer.Option(..., "--dataset", exists=True,
                                 help="QA .jsonl or a document-QA folder"),
    kind: str = typer.Option("mog", "--kind"),
    limit: int | None = typer.Option(None, "--limit"),
) -> None:
    """The level the corpus's router (own, default or fixed) chooses for each question, counted."""
    from kg_platform.evaluation.docqa import is_docqa_folder, load_docqa
    from kg_platform.retrieval.mog import plan_for
    from kg_platform.retrieval.router import read_dataset
    from kg_platform.retrieval.router_default import level_distribution, n_levels_for

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
    typer.echo(json.dumps({
        "corpus": corpus, "kind": kind, "dataset": str(dataset), "questions": len(questions),
        "router": plans[0].router_source if plans else None,
        "version": plans[0].router_version if plans else None,
        "levels": level_distribution((p.g_r for p in plans), n_levels_for(ctx.settings, kind)),
        "mean_weights": [round(float(x), 4) for x in np.mean([p.w for p in plans], axis=0)]
        if plans else [],
    }, indent=2))


@router_app.command("collect")
def router_collect(
    corpus: str = typer.Option(..., "--corpus", help="the ingested corpus of the dataset"),
    dataset: Path = typer.Option(..., "--dataset", exists=True,
                                 help="QA .jsonl or a document-QA folder (scoped per question)"),
    kind: str = typer.Option("mog", "--kind"),
    out: Path = typer.Option(..., "--out", help="JSONL of per-question level similarities"),
    limit: int | None = typer.Option(None, "--limit"),
) -> None:
    """Soft-label material for default routers: each level's best snippet vs the label."""
    from kg_platform.retrieval.router_default import collect_labels

    ctx = _context(corpus)
    try:
        res = collect_labels(ctx, dataset, kind, out, limit=limit, echo=typer.echo)
    finally:
        ctx.graph.close()
    typer.echo(json.dumps(res, indent=2))


@router_app.command("train-default")
def router_train_default(
    labels: list[Path] = typer.Option(..., "--labels", exists=True,
                                      help="`kgp router collect` outputs (repeatable)"),
    kind: str = typer.Option("mog", "--kind"),
    out: Path = typer.Option(..., "--out", help="router folder to write (weights.npz, meta.json)"),
    exclude: list[str] = typer.Option(None, "--exclude",
                                      help="leave these datasets out (leave-one-out routers)"),
) -> None:
    """Train a corpus-independent router on several datasets' label records."""
    from kg_platform.config import get_settings
    from kg_platform.embedding import get_embedder
    from kg_platform.retrieval.router_default import read_records, train_default

    settings = get_settings()
    meta = train_default(read_records(labels), kind, out, settings,
                         get_embedder(settings.embedding), exclude=exclude or ())
    typer.echo(json.dumps(meta, indent=2))
