"""``kgp lab rerank collect`` and ``kgp lab rerank fit``: the late rerank's per-strategy
weights, fitted on training questions (``lab/docs/evaluation.md``, "Fitting the late rerank");
``kgp lab rerank train-head``: its trained query head (same manual, "Training the query head")."""

from __future__ import annotations

import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import typer

from kg_platform.cli.groups import group
from kg_platform.cli.lazy import get_settings

RERANK_HELP = (
    "Fit the late rerank's per-strategy weights, train its query head and fit the document rerank."
)


def register(app: typer.Typer) -> None:
    rerank = group(app, "rerank", RERANK_HELP)
    rerank.command("collect")(collect)
    rerank.command("fit")(fit)
    rerank.command("score")(score)
    rerank.command("train-head")(train_head)
    from kg_platform_lab.cli.commands_structure import fit_structure

    rerank.command("fit-structure")(fit_structure)


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
    n_candidates: int | None = typer.Option(
        None,
        "--n-candidates",
        help="candidates reranked (default: the weights file's count for each strategy, else 30)",
    ),
) -> None:
    """Recall of each strategy's pools without a rerank, with the unfitted rule and with a
    weights file's weights (a check on questions the weights were not fitted on)."""
    from kg_platform.retrieval.rerank.weights import (
        SHIPPED_WEIGHTS,
        candidates_in,
        load_weights,
        weights_in,
    )
    from kg_platform_lab.rerank.fit import FIXED, Scorer
    from kg_platform_lab.rerank.pools import read_pools

    data = load_weights(weights or SHIPPED_WEIGHTS)
    scorer = Scorer(_examples(datasets), [int(b) for b in budgets.split(",")])
    all_pools = [p for f in pools for p in read_pools(f)]
    for strategy in sorted({p.strategy for p in all_pools}):
        group_pools = [p for p in all_pools if p.strategy == strategy]
        fitted = weights_in(data, strategy)
        n = n_candidates or candidates_in(data, strategy)
        typer.echo(
            f"{strategy:12s} n={len(group_pools):5d} candidates={n} "
            f"none={_fmt(scorer.mean(group_pools, None, n))} "
            f"fixed={_fmt(scorer.mean(group_pools, FIXED, n))} "
            f"weights={_fmt(scorer.mean(group_pools, fitted, n))}"
        )


def train_head(
    pools: list[Path] = typer.Option(
        ...,
        "--pools",
        exists=True,
        dir_okay=False,
        help="pools file of one training set (kgp lab rerank collect); once per set",
    ),
    datasets: list[Path] = typer.Option(
        ..., "--dataset", exists=True, help="the set's dataset (the pools' questions and gold)"
    ),
    corpora: list[str] = typer.Option(
        ..., "--corpus", help="the corpus the set's pools were collected from"
    ),
    strategies: str = typer.Option(
        "hybrid", "--strategy", help="the strategies whose pools are trained on (comma-separated)"
    ),
    candidates: int = typer.Option(30, "--candidates", min=2, help="candidates read per pool"),
    states: str = typer.Option(
        "none",
        "--states",
        help="the model copy whose word-piece states are trained on: none (fp32) or int8; the "
        "product reads the question with the copy the head records (rerank.quantize = auto)",
    ),
    epochs: int = typer.Option(2, "--epochs", min=1, help="passes over the training lists"),
    lr: float = typer.Option(1e-3, "--lr", min=0.0, help="Adam's learning rate"),
    reg: float = typer.Option(1e-3, "--reg", min=0.0, help="L2 weight on the mapping A"),
    seed: int = typer.Option(0, "--seed", help="seed of the shuffles (and of torch)"),
    threads: int = typer.Option(
        2,
        "--threads",
        min=1,
        help="torch threads; the shipped head was trained on 2 (another count gives a slightly "
        "different head; 1 is much faster while another process keeps a core busy)",
    ),
    held_half: bool = typer.Option(
        True,
        "--held-half/--no-held-half",
        help="first train on half of the papers and report the other half's recall per epoch "
        "(how --epochs was chosen)",
    ),
    held_half_epochs: int = typer.Option(
        4, "--held-half-epochs", min=1, help="epochs the held-half check reports"
    ),
    out: Path = typer.Option(
        ..., "--out", file_okay=False, help="folder for query-head.onnx and query-head.json"
    ),
) -> None:
    """Train the late rerank's query head on training sets' pools and write it as the product
    loads it (ONNX + provenance). Needs Neo4j: each candidate is read under its section path."""
    counts = {"--pools": len(pools), "--dataset": len(datasets), "--corpus": len(corpora)}
    if len(set(counts.values())) != 1:
        given = ", ".join(f"{n} {opt}" for opt, n in counts.items())
        raise typer.BadParameter(
            f"got {given}: give --pools, --dataset and --corpus once per training set, in the "
            "same order (the n-th --pools was collected from the n-th --dataset, ingested as "
            "the n-th --corpus)",
            param_hint="--pools/--dataset/--corpus",
        )
    names = [s.strip() for s in strategies.split(",") if s.strip()]
    if not names:
        raise typer.BadParameter("name at least one strategy", param_hint="--strategy")
    if states not in ("none", "int8"):
        raise typer.BadParameter(f"unknown states {states!r}: none or int8", param_hint="--states")
    try:
        from kg_platform_lab.rerank import query_head as qh
    except ImportError as exc:  # torch is the lab's [train] extra
        raise typer.BadParameter(
            f"training the head needs torch ({exc}): pip install -e 'lab/[train]'",
            param_hint="train-head",
        ) from exc
    from kg_platform.retrieval.rerank.query_head import EMBEDDER
    from kg_platform.sdk.platform import KnowledgePlatform
    from kg_platform_lab.rerank.pools import pool_dataset_name, read_pools

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    examples = _examples(datasets)
    sets, set_pools = [], []
    seen: set[tuple[str, str, str]] = set()
    for i, (pools_file, dataset, corpus) in enumerate(zip(pools, datasets, corpora), start=1):
        chosen = [p for p in read_pools(pools_file) if p.strategy in names]
        if not chosen:
            raise typer.BadParameter(
                f"{pools_file} holds no pools of {', '.join(names)}: collect them with "
                f"`kgp lab rerank collect --strategy {','.join(names)}`, or name its strategy",
                param_hint="--pools/--strategy",
            )
        name = pool_dataset_name(dataset)
        collected_from = sorted({p.dataset for p in chosen})
        if collected_from != [name]:
            raise typer.BadParameter(
                f"set {i}: the pools in {pools_file} were collected from "
                f"{', '.join(collected_from)}, not from --dataset {dataset} ({name}): give each "
                "--pools the --dataset (and --corpus) it was collected from, in the same position",
                param_hint="--pools/--dataset",
            )
        unknown = [p.question_id for p in chosen if (p.dataset, p.question_id) not in examples]
        if unknown:
            raise typer.BadParameter(
                f"set {i}: {len(unknown)} pools in {pools_file} ask questions {dataset} does not "
                f"hold (first: {unknown[0]}): give the --dataset the pools were collected from",
                param_hint="--pools/--dataset",
            )
        for p in chosen:
            key = (p.dataset, p.question_id, p.strategy)
            if key in seen:
                raise typer.BadParameter(
                    f"the {p.strategy} pool of question {p.question_id} ({p.dataset}) is given "
                    f"twice (again in {pools_file}): `collect` appends to its --out, so it was "
                    "probably run twice into one file; keep one copy of each pool (a repeated "
                    "pool would be trained on twice)",
                    param_hint="--pools",
                )
            seen.add(key)
        set_pools.append(chosen)
        sets.append(
            {
                "pools": str(pools_file),
                "dataset": str(dataset),
                "corpus": corpus,
                "questions": len(chosen),
                **_manifest(dataset),
            }
        )

    started = time.perf_counter()
    rows = []
    with KnowledgePlatform(get_settings()) as kp:
        corpus_names = [kp.corpus_name(c) for c in corpora]
        model = getattr(kp.embedder, "model_name", type(kp.embedder).__name__)
        if model != EMBEDDER:
            raise typer.BadParameter(
                f"the head maps {EMBEDDER}'s word pieces (the product uses it with that "
                f"embedder only), and this configuration embeds with {model}: train with the "
                "default local embedder",
                param_hint="embedding",
            )
        out.mkdir(parents=True, exist_ok=True)
        for chosen, dataset, corpus in zip(set_pools, datasets, corpus_names):
            name = pool_dataset_name(dataset)
            rows += qh.collect_states(
                chosen,
                {qid: ex.question for (d, qid), ex in examples.items() if d == name},
                corpus,
                kp,
                strategies=names,
                candidates=candidates,
                states=states,
                log=log,
            )
    states_seconds = time.perf_counter() - started
    log(f"states of {len(rows)} questions in {states_seconds:.0f} s")

    index = qh.pool_index(p for chosen in set_pools for p in chosen)
    held = None
    if held_half:
        held = qh.held_half_check(
            rows,
            index,
            examples,
            epochs=held_half_epochs,
            lr=lr,
            reg=reg,
            seed=seed,
            threads=threads,
            log=log,
        )
    lists = qh.training_lists(rows, index, examples)
    started = time.perf_counter()
    head = qh.train_head(
        rows,
        index,
        examples,
        epochs=epochs,
        lr=lr,
        reg=reg,
        seed=seed,
        log=log,
        threads=threads,
        lists=lists,
    )
    train_seconds = time.perf_counter() - started
    onnx_path = qh.export_onnx(head, out / "query-head.onnx")
    record = qh.provenance_record(
        sets=sets,
        papers=len({examples[(r.dataset, r.question_id)].doc_id for r in rows}),
        questions=len(rows),
        lists=len(lists),
        strategies=names,
        candidates=candidates,
        epochs=epochs,
        lr=lr,
        reg=reg,
        seed=seed,
        train_seconds=train_seconds,
        command=shlex.join(["kgp", *sys.argv[1:]]),
        held_half=held,
        threads=threads,
        states=states,
    )
    json_path = qh.write_provenance(onnx_path, record)
    typer.echo(
        json.dumps(
            {
                "questions": len(rows),
                "lists_trained": len(lists),
                "states_seconds": round(states_seconds, 1),
                "train_seconds": round(train_seconds, 1),
                "onnx": str(onnx_path),
                "provenance": str(json_path),
                **({"held_half": held} if held else {}),
            }
        )
    )


def _manifest(dataset: Path) -> dict[str, Any]:
    """Where a sampled dataset came from (``sample-docqa``'s manifest.json), for provenance."""
    path = dataset / "manifest.json"
    if not path.is_file():
        return {}
    manifest = json.loads(path.read_text(encoding="utf-8"))
    return {k: manifest[k] for k in ("source", "rule", "papers") if k in manifest}


def _examples(datasets: list[Path]) -> dict:
    """(dataset name, question id) -> question, for QA files and document-QA folders."""
    from kg_platform_lab.evaluation.datasets import load_dataset
    from kg_platform_lab.evaluation.docqa import is_docqa_folder, load_docqa
    from kg_platform_lab.rerank.pools import pool_dataset_name

    examples: dict = {}
    for d in datasets:
        questions = load_docqa(d) if is_docqa_folder(d) else load_dataset(d)
        examples.update({(pool_dataset_name(d), q.id): q for q in questions})
    return examples


def _fmt(values: tuple[float, ...]) -> str:
    return "/".join(f"{v:.3f}" for v in values)
