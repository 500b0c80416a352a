"""``kgp retrieve``, ``kgp router train`` and ``kgp bench retrieve``."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from kg_platform.config import get_settings

router_app = typer.Typer(help="Train and inspect MoG / MoGG routers.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.command("retrieve")(retrieve)
    app.add_typer(router_app, name="router")
    from kg_platform.cli.bench import bench_app

    bench_app.command("retrieve")(bench_retrieve)


def _context(corpus: str | None):  # noqa: ANN202
    from kg_platform.embedding import get_embedder
    from kg_platform.graph import GraphClient
    from kg_platform.retrieval.base import RetrievalContext

    settings = get_settings()
    graph = GraphClient.from_settings(settings)
    return RetrievalContext(graph=graph, embedder=get_embedder(settings.embedding),
                            settings=settings, corpus=corpus)


def retrieve(
    question: str = typer.Argument(..., help="the question text"),
    strategy: str = typer.Option("mog", "--strategy", "-s", help="a registered strategy"),
    k: int = typer.Option(5, "--k", "-k", help="results to return"),
    select: str = typer.Option("none", "--select", help="post-processor: none | sage"),
    explain: bool = typer.Option(False, "--explain", help="print breakdowns and a Browser query"),
    corpus: str | None = typer.Option(None, "--corpus", help="restrict to one corpus"),
    scope: list[str] = typer.Option(None, "--scope",
                                    help="only these documents: source id, title, path or file "
                                         "name (repeatable)"),
    as_json: bool = typer.Option(False, "--json", help="print results as JSON"),
) -> None:
    """Retrieve evidence for a question with one strategy (and optional SAGE selection)."""
    import logging

    from kg_platform._faults import fault_point
    from kg_platform.retrieval.base import get_strategy
    from kg_platform.retrieval.explain import browser_snippet, explain_lines
    from kg_platform.retrieval.scope import resolve_scope
    from kg_platform.retrieval.selection import apply_selection, candidates_needed

    if explain:
        logging.getLogger("kg_platform.retrieval").setLevel(logging.INFO)
    ctx = _context(corpus)
    try:
        ctx.sources = resolve_scope(ctx.graph, scope, corpus)
        strat = get_strategy(strategy, ctx)
        fault_point("retrieve")
        items = strat.retrieve(question, candidates_needed(select, k, ctx))
        items = apply_selection(select, question, items, ctx)
        if select in ("none", ""):
            items = items[:k]
    finally:
        ctx.graph.close()
    if as_json:
        payload = {"question": question, "strategy": strategy, "select": select,
                   "items": [it.to_dict() for it in items]}
        if explain:
            payload["browser"] = browser_snippet(items)
        typer.echo(json.dumps(payload, indent=2, default=str))
        return
    for rank, it in enumerate(items, 1):
        where = it.source_title or it.source_id or ""
        typer.echo(f"{rank}. [{it.score:.3f}] {where} ({it.kind} L{it.level}, {it.tokens} tok)")
        typer.echo("   " + " ".join((it.text or "").split())[:300])
    if explain:
        typer.echo("\n".join(["", "explanation:", *explain_lines(items), "",
                              "Neo4j Browser (paste):", browser_snippet(items)]))


@router_app.command("train")
def router_train(
    corpus: str = typer.Option(..., "--corpus", help="the corpus the router routes for"),
    dataset: Path = typer.Option(..., "--dataset", exists=True, dir_okay=False,
                                 help="JSONL questions (bench schema); labels = gold supporting "
                                 "sentences, else question + answer"),
    kind: str = typer.Option("mog", "--kind", help="mog (granularity levels) | mogg (hop ranges)"),
    limit: int | None = typer.Option(None, "--limit", help="use only the first N questions"),
) -> None:
    """Train a router with soft labels, save it versioned and register it as (:Router)."""
    from kg_platform.retrieval.router import train_router

    ctx = _context(corpus)
    try:
        out = train_router(ctx, dataset, kind, limit=limit, echo=typer.echo)
    finally:
        ctx.graph.close()
    typer.echo(json.dumps(out, indent=2))


@router_app.command("show")
def router_show(corpus: str = typer.Option(..., "--corpus"),
                kind: str = typer.Option("mog", "--kind")) -> None:
    """Print the newest router of a corpus and its metrics."""
    ctx = _context(corpus)
    try:
        rows = ctx.graph.read("retrieval/mog_router_latest", corpus=corpus, kind=kind)
    finally:
        ctx.graph.close()
    if not rows:
        typer.echo(f"no {kind} router for corpus {corpus!r}; MoG uses the fixed level")
        raise typer.Exit(1)
    typer.echo(json.dumps({"id": rows[0]["id"], "path": rows[0]["path"],
                           "metrics": json.loads(rows[0]["metrics"] or "{}")}, indent=2))


def bench_retrieve(
    corpus: str = typer.Option(..., "--corpus", help="dev corpus (in the shared graph) to copy"),
    sizes: str = typer.Option("10000,100000", "--sizes", help="target piece counts"),
    queries: int = typer.Option(30, "--queries", help="timed queries per strategy and size"),
    strategies: str = typer.Option("vector,mog,mogg,propagate", "--strategies"),
    out: Path | None = typer.Option(None, "--out", help="write the JSON report here"),
    profile: bool = typer.Option(False, "--profile",
                                 help="also PROFILE one query per strategy and size: db hits, "
                                 "rows and the costliest operators"),
) -> None:
    """Latency p50/p95 of strategies at growing graph sizes, next to one vector query."""
    from kg_platform.retrieval.bench import run_bench

    report = run_bench(corpus, [int(s) for s in sizes.split(",")], queries,
                       [s.strip() for s in strategies.split(",") if s.strip()], echo=typer.echo,
                       profile=profile)
    if out:
        out.write_text(json.dumps(report, indent=2))


@router_app.command("fit-propagation")
def fit_propagation(
    corpus: str = typer.Option(..., "--corpus"),
    dataset: Path = typer.Option(..., "--dataset", exists=True, dir_okay=False),
    k: int = typer.Option(5, "--k", help="score paragraph recall at k results"),
    budget_tokens: int | None = typer.Option(
        None, "--budget-tokens", help="score at this many context tokens instead of at k"),
    aggregate: str = typer.Option("wsum", "--aggregate", help="wsum | wmax | rrf"),
    holdout: float = typer.Option(
        0.5, "--holdout", min=0.0, max=0.9,
        help="fraction of the questions (every n-th) kept out of the fit and scored with the "
        "fitted weights, so the reported number is not only in-sample"),
    limit: int | None = typer.Option(None, "--limit"),
) -> None:
    """Grid-search the propagation layer weights on dev questions (paragraph recall)."""
    from kg_platform.evaluation.datasets import load_dataset
    from kg_platform.evaluation.harness import items_to_fetch, ranking_score
    from kg_platform.retrieval.propagate import fit_weights, rank_with

    examples = [ex for ex in load_dataset(dataset) if ex.gold][:limit]
    every = round(1 / holdout) if holdout > 0 else 0
    held = [i for i in range(len(examples)) if every and i % every == every - 1]
    train = sorted(set(range(len(examples))) - set(held))
    ctx = _context(corpus)

    def recall(i: int, items) -> float:  # noqa: ANN001
        return ranking_score(items, examples[i].gold, k=k, budget=budget_tokens).paragraph_recall

    fetch = items_to_fetch(k, budget_tokens)   # as many items as `kgp eval` asks for
    try:
        lam, fit_score, cached = fit_weights(ctx, [ex.question for ex in examples], recall, fetch,
                                             aggregate=aggregate, train=train)
    finally:
        ctx.graph.close()
    out = {"weights": lam, "aggregate": aggregate, "paragraph_recall_train": round(fit_score, 4),
           "train_questions": len(train), "heldout_questions": len(held),
           "cut": {"budget_tokens": budget_tokens} if budget_tokens else {"k": k}}
    if held:
        out["paragraph_recall_heldout"] = round(
            sum(recall(i, rank_with(cached[i], lam, aggregate)) for i in held) / len(held), 4)
    typer.echo(json.dumps(out, indent=2))
    typer.echo("set with: " + " ".join(f"KGP_PROPAGATION__LAM_{x}={v}" for x, v in lam.items())
               + f" KGP_PROPAGATION__AGGREGATE={aggregate}")
