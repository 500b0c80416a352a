"""``kgp lab router train``, ``kgp lab router fit-propagation`` and ``kgp lab bench retrieve``."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from kg_platform.cli.groups import group
from kg_platform.cli.lazy import get_settings
from kg_platform_lab.cli.bench import bench_group

ROUTER_HELP = "Train MoG / MoGG routers, the shipped defaults and the propagation weights."


def register(app: typer.Typer) -> None:
    router = group(app, "router", ROUTER_HELP)
    router.command("train")(router_train)
    router.command("fit-propagation")(fit_propagation)
    bench_app = bench_group(app)
    bench_app.command("retrieve")(bench_retrieve)


def _platform():  # the SDK type is imported lazily to keep `--help` light
    from kg_platform.sdk.platform import KnowledgePlatform

    return KnowledgePlatform(get_settings())


def router_train(
    corpus: str = typer.Option(..., "--corpus", help="the corpus the router routes for"),
    dataset: Path = typer.Option(
        ...,
        "--dataset",
        exists=True,
        dir_okay=False,
        help="JSONL questions (bench schema); labels = gold supporting "
        "sentences, else question + answer",
    ),
    kind: str = typer.Option("mog", "--kind", help="mog (granularity levels) | mogg (hop ranges)"),
    limit: int | None = typer.Option(None, "--limit", help="use only the first N questions"),
) -> None:
    """Train a router with soft labels, save it versioned and register it as (:Router)."""
    from kg_platform_lab.routers.training import train_router

    with _platform() as kp:
        out = train_router(
            kp.retrieval_context(kp.corpus_name(corpus)),
            dataset,
            kind=kind,
            limit=limit,
            echo=typer.echo,
        )
    typer.echo(json.dumps(out, indent=2))


def bench_retrieve(
    corpus: str = typer.Option(..., "--corpus", help="dev corpus (in the shared graph) to copy"),
    sizes: str = typer.Option("10000,100000", "--sizes", help="target piece counts"),
    queries: int = typer.Option(30, "--queries", help="timed queries per strategy and size"),
    strategies: str = typer.Option("vector,mog,mogg,propagate", "--strategies"),
    out: Path | None = typer.Option(None, "--out", help="write the JSON report here"),
    profile: bool = typer.Option(
        False,
        "--profile",
        help="also PROFILE one query per strategy and size: db hits, "
        "rows and the costliest operators",
    ),
    heap: str = typer.Option("2g", "--heap", help="the bench server's JVM heap"),
    pagecache: str = typer.Option(
        "1g", "--pagecache", help="the bench server's page cache (a million pieces: 6g or more)"
    ),
    keep: Path | None = typer.Option(
        None,
        "--keep",
        file_okay=False,
        help="keep the replica server in this folder and reuse its copies next time "
        "(default: a temporary server, deleted after the run)",
    ),
    questions: Path | None = typer.Option(
        None,
        "--questions",
        exists=True,
        dir_okay=False,
        help="time these QA-file questions (the first --queries) instead of sampled piece texts",
    ),
    rounds: int = typer.Option(
        1,
        "--rounds",
        min=1,
        help="run the queries this many times; above 1 the first round only warms the caches "
        "(a kept server starts cold) and the others are timed",
    ),
) -> None:
    """Latency p50/p95 of strategies at growing graph sizes, next to one vector query."""
    from kg_platform_lab.bench.retrieval import run_bench

    report = run_bench(
        corpus,
        [int(s) for s in sizes.split(",")],
        queries,
        [s.strip() for s in strategies.split(",") if s.strip()],
        echo=typer.echo,
        profile=profile,
        heap=heap,
        pagecache=pagecache,
        keep=keep,
        rounds=rounds,
        questions=questions,
    )
    if out:
        out.write_text(json.dumps(report, indent=2))


def fit_propagation(
    corpus: str = typer.Option(..., "--corpus"),
    dataset: Path = typer.Option(
        ...,
        "--dataset",
        exists=True,
        help="JSONL questions (bench schema), or a document-QA folder (papers/ + "
        "questions.jsonl): each question is then asked in its own paper, as `kgp lab eval` "
        "scopes it, and scored by evidence recall",
    ),
    k: int = typer.Option(5, "--k", help="score paragraph recall at k results"),
    budget_tokens: int | None = typer.Option(
        None, "--budget-tokens", help="score at this many context tokens instead of at k"
    ),
    aggregate: str = typer.Option("wsum", "--aggregate", help="wsum | wmax | rrf"),
    holdout: float = typer.Option(
        0.5,
        "--holdout",
        min=0.0,
        max=0.9,
        help="fraction of the questions (every n-th) kept out of the fit and scored with the "
        "fitted weights, so the reported number is not only in-sample",
    ),
    top: int = typer.Option(1, "--top", min=1, help="report the best N weightings, not only one"),
    limit: int | None = typer.Option(None, "--limit"),
) -> None:
    """Grid-search the propagation layer weights on dev questions (paragraph or evidence recall
    of the strategy's own ranking, before any selection)."""
    from kg_platform_lab.evaluation.harness import (
        cut_at,
        items_to_fetch,
        load_examples,
        score_example,
        scope_examples,
        to_ranking,
    )
    from kg_platform.retrieval.strategies.propagate import grid_scores, layer_candidates, rank_with

    document_qa = dataset.is_dir()
    examples = load_examples(dataset, document_qa=document_qa)[1][:limit]
    kp = _platform()
    try:
        ctx = kp.retrieval_context(corpus)
        scopes = None
        if document_qa:
            examples, by_doc = scope_examples(ctx.graph, ctx.corpus, examples)
            scopes = [by_doc[ex.doc_id] for ex in examples]
        if not examples:
            raise typer.BadParameter(
                f"no question of {dataset} has gold and (for papers) its paper in {corpus!r}: "
                "ingest it first (`kgp lab eval --dataset ... --corpus ...` does)",
                param_hint="--dataset",
            )
        every = round(1 / holdout) if holdout > 0 else 0
        held = [i for i in range(len(examples)) if every and i % every == every - 1]
        train = sorted(set(range(len(examples))) - set(held))

        fetch = items_to_fetch(k, budget_tokens)  # as many items as `kgp lab eval` asks for
        memo: dict[tuple[int, object], float] = {}

        def recall(i: int, items) -> float:
            """Scored as `kgp lab eval` scores the first ``fetch`` items. Many weightings of the
            grid give a question the same head (at k: the same set), scored once."""
            head = items[:fetch]
            ids = tuple(it.id for it in head)
            key = (i, ids if budget_tokens else frozenset(ids))
            if key not in memo:
                # a document question's paragraph recall is its evidence recall
                ranking = cut_at(to_ranking(head), k, budget_tokens)
                memo[key] = score_example(examples[i], ranking).paragraph_recall
            return memo[key]

        cached = layer_candidates(ctx, [ex.question for ex in examples], fetch, scopes)
    finally:
        kp.close()
    ranked = grid_scores(cached, recall, aggregate=aggregate, train=train)
    fits = []
    for lam, fit_score in ranked[:top]:
        fit = {"weights": lam, "recall_train": round(fit_score, 4)}
        if held:
            fit["recall_heldout"] = round(
                sum(recall(i, rank_with(cached[i], lam, aggregate)) for i in held) / len(held), 4
            )
        fits.append(fit)
    lam = ranked[0][0]
    out = {
        "weights": lam,
        "aggregate": aggregate,
        "paragraph_recall_train": fits[0]["recall_train"],
        "measure": "evidence_recall" if document_qa else "paragraph_recall",
        "train_questions": len(train),
        "heldout_questions": len(held),
        "cut": {"budget_tokens": budget_tokens} if budget_tokens else {"k": k},
    }
    if held:
        out["paragraph_recall_heldout"] = fits[0]["recall_heldout"]
    if top > 1:
        out["best"] = fits
    typer.echo(json.dumps(out, indent=2))
    typer.echo(
        "set with: "
        + " ".join(f"KGP_LAB__TUNING__PROPAGATION__LAM_{x}={v}" for x, v in lam.items())
        + f" KGP_LAB__TUNING__PROPAGATION__AGGREGATE={aggregate}"
    )
