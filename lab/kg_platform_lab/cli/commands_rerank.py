"""``kgp lab rerank collect`` and ``kgp lab rerank fit``: the late rerank's per-strategy
weights, fitted on training questions (``lab/docs/evaluation.md``, "Fitting the late rerank")."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import typer

from kg_platform.cli.groups import group
from kg_platform.cli.lazy import get_settings

RERANK_HELP = "Fit the late rerank's per-strategy weights on training questions."


def register(app: typer.Typer) -> None:
    rerank = group(app, "rerank", RERANK_HELP)
    rerank.command("collect")(collect)
    rerank.command("fit")(fit)
    rerank.command("score")(score)


def collect(
    dataset: Path = typer.Option(
        ..., "--dataset", exists=True, help="a document-QA folder or a QA .jsonl file"
    ),
    corpus: str = typer.Option(..., "--corpus", help="the corpus its documents are ingested in"),
    strategies: str = typer.Option("hybrid,propagate,mog", "--strategy", help="comma-separated"),
    out: Path = typer.Option(..., "--out", help="pools file (JSON lines), appended to"),
    fetch: int = typer.Option(64, "--fetch", help="candidates kept per question"),
    head: int = typer.Option(
        40, "--head", help="candidates given late features (max n_candidates fitted)"
    ),
    limit: int | None = typer.Option(None, "--limit", help="only the first N questions"),
) -> None:
    """Each strategy's candidates for each question, with the late rerank's features."""
    from kg_platform.sdk.platform import KnowledgePlatform
    from kg_platform_lab.rerank.pools import collect_pools

    names = [s.strip() for s in strategies.split(",") if s.strip()]
    started = time.perf_counter()
    count = 0
    with KnowledgePlatform(get_settings()) as kp, out.open("a", encoding="utf-8") as fh:
        for pool in collect_pools(
            dataset,
            kp.corpus_name(corpus),
            names,
            kp.graph,
            kp.embedder,
            kp.settings,
            fetch=fetch,
            head=head,
            limit=limit,
        ):
            fh.write(pool.to_json() + "\n")
            count += 1
            if count % 50 == 0:
                print(f"{pool.strategy}: {count} pools", file=sys.stderr, flush=True)
    typer.echo(
        json.dumps(
            {"pools": count, "out": str(out), "seconds": round(time.perf_counter() - started, 1)}
        )
    )


def fit(
    pools: list[Path] = typer.Option(..., "--pools", exists=True, help="pools files"),
    datasets: list[Path] = typer.Option(
        ..., "--dataset", exists=True, help="the datasets the pools came from (for their gold)"
    ),
    budgets: str = typer.Option("512,1024", "--budgets", help="token budgets averaged"),
    n_candidates: str = typer.Option(
        "30", "--n-candidates", help="candidates reranked; several (30,40) = the best per strategy"
    ),
    default_from: str = typer.Option(
        "hybrid",
        "--default-from",
        help="the strategy whose weights strategies without their own use",
    ),
    out: Path | None = typer.Option(None, "--out", help="write the weights file here"),
    report: Path | None = typer.Option(None, "--report", help="write the fit's report (JSON)"),
) -> None:
    """Grid-search each strategy's weights on its pools; print fitted vs fixed vs none."""
    from kg_platform_lab.rerank.fit import Scorer, fit_strategy
    from kg_platform_lab.rerank.pools import read_pools
    from kg_platform_lab.rerank.weights_file import write_weights

    examples = _examples(datasets)
    all_pools = [p for f in pools for p in read_pools(f)]
    missing = {p.dataset for p in all_pools if (p.dataset, p.question_id) not in examples}
    if missing:
        raise typer.BadParameter(f"no --dataset given for the pools of {sorted(missing)}")
    scorer = Scorer(examples, [int(b) for b in budgets.split(",")])
    n_values = [int(n) for n in n_candidates.split(",")]
    fits = []
    groups = {
        s: [p for p in all_pools if p.strategy == s]
        for s in sorted({p.strategy for p in all_pools})
    }
    for strategy, group_pools in groups.items():
        started = time.perf_counter()
        result = max(
            (fit_strategy(strategy, group_pools, scorer, n) for n in n_values),
            key=lambda f: float(sum(f.best_recall)),
        )
        fits.append(result)
        typer.echo(
            f"{strategy:12s} n={result.questions:5d} none={_fmt(result.none_recall)} "
            f"fixed={_fmt(result.fixed_recall)} fitted={_fmt(result.best_recall)} "
            f"n={result.n_candidates} {result.best.to_dict()} "
            f"({time.perf_counter() - started:.0f} s)"
        )
    body = {
        "budgets": scorer.budgets,
        "n_candidates": n_values,
        "default_from": default_from,
        "pools": [str(p) for p in pools],
        "datasets": [str(d) for d in datasets],
        "fits": [f.to_json() for f in fits],
    }
    if report:
        report.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
    if out:
        write_weights(out, fits, body)
        typer.echo(f"weights written to {out}")


def score(
    pools: list[Path] = typer.Option(..., "--pools", exists=True, help="pools files"),
    datasets: list[Path] = typer.Option(..., "--dataset", exists=True, help="their datasets"),
    weights: Path | None = typer.Option(
        None, "--weights", help="a weights file (default: the shipped one)"
    ),
    budgets: str = typer.Option("512,1024", "--budgets", help="token budgets"),
    n_candidates: int = typer.Option(30, "--n-candidates", help="candidates reranked"),
) -> None:
    """Recall of each strategy's pools without a rerank, with the unfitted rule and with a
    weights file's weights (a check on questions the weights were not fitted on)."""
    from kg_platform.retrieval.rerank_weights import SHIPPED_WEIGHTS, load_weights, weights_in
    from kg_platform_lab.rerank.fit import FIXED, Scorer
    from kg_platform_lab.rerank.pools import read_pools

    data = load_weights(weights or SHIPPED_WEIGHTS)
    scorer = Scorer(_examples(datasets), [int(b) for b in budgets.split(",")])
    all_pools = [p for f in pools for p in read_pools(f)]
    for strategy in sorted({p.strategy for p in all_pools}):
        group_pools = [p for p in all_pools if p.strategy == strategy]
        fitted = weights_in(data, strategy)
        typer.echo(
            f"{strategy:12s} n={len(group_pools):5d} "
            f"none={_fmt(scorer.mean(group_pools, None, n_candidates))} "
            f"fixed={_fmt(scorer.mean(group_pools, FIXED, n_candidates))} "
            f"weights={_fmt(scorer.mean(group_pools, fitted, n_candidates))}"
        )


def _examples(datasets: list[Path]) -> dict:
    """(dataset name, question id) -> question, for QA files and document-QA folders."""
    from kg_platform_lab.evaluation.datasets import load_dataset
    from kg_platform_lab.evaluation.docqa import is_docqa_folder, load_docqa

    examples: dict = {}
    for d in datasets:
        if is_docqa_folder(d):
            examples.update({(d.name, q.id): q for q in load_docqa(d)})
        else:
            examples.update({(d.stem, q.id): q for q in load_dataset(d)})
    return examples


def _fmt(values: tuple[float, ...]) -> str:
    return "/".join(f"{v:.3f}" for v in values)
