"""``kgp lab rerank fit-structure``: the document rerank's weights, fitted on training pools
(``lab/docs/evaluation.md``, "Fitting the document rerank")."""

from __future__ import annotations

import json
import shlex
import sys
import time
from pathlib import Path

import typer


def fit_structure(
    pools: list[Path] = typer.Option(
        ...,
        "--pools",
        exists=True,
        dir_okay=False,
        help="pools file of one training set (kgp lab rerank collect --head 30); once per set",
    ),
    datasets: list[Path] = typer.Option(
        ..., "--dataset", exists=True, help="the set's dataset (its questions and gold), in order"
    ),
    check_pools: list[Path] = typer.Option(
        [], "--check-pools", exists=True, dir_okay=False, help="pools only reported, never fitted"
    ),
    check_datasets: list[Path] = typer.Option(
        [], "--check-dataset", exists=True, help="the check pools' datasets, in order"
    ),
    strategy: str = typer.Option("hybrid", "--strategy", help="the strategy whose pools count"),
    c: float = typer.Option(1.0, "--c", min=1e-6, help="inverse strength of the L2 penalty"),
    out: Path = typer.Option(
        ...,
        "--out",
        file_okay=False,
        help="folder for structure-rerank.weights.json and structure-rerank.json",
    ),
) -> None:
    """Fit the document rerank on training sets' pools and write it as the product loads it
    (weights + provenance with their sha256). Needs Neo4j holding the pools' corpora: each
    candidate's place in its document is read from the graph."""
    from kg_platform.graph import GraphClient
    from kg_platform.retrieval.rerank.structure import file_sha256
    from kg_platform_lab.cli.commands_rerank import _examples, _manifest
    from kg_platform_lab.rerank.fit import Scorer
    from kg_platform_lab.rerank.pools import read_pools
    from kg_platform_lab.rerank.query_head import half_of
    from kg_platform_lab.rerank import structure_fit as sf

    if len(pools) != len(datasets) or len(check_pools) != len(check_datasets):
        raise typer.BadParameter(
            "give one --dataset per --pools and one --check-dataset per --check-pools, in order",
            param_hint="--pools/--dataset",
        )
    started = time.perf_counter()
    examples = _examples([*datasets, *check_datasets])
    scorer = Scorer(examples, (512, 1024))

    def lists_of(files: list[Path], graph: GraphClient) -> list[sf.FeatureList]:
        chosen = [p for f in files for p in read_pools(f) if p.strategy == strategy]
        return sf.feature_lists(chosen, graph)

    with GraphClient.from_settings() as graph:
        train = lists_of(pools, graph)
        check = lists_of(check_pools, graph)
    x, y = sf.training_matrix(train, examples)
    model = sf.fit_logistic(x, y, c)

    def doc(fl: sf.FeatureList) -> str:
        return str(examples[(fl.pool.dataset, fl.pool.question_id)].doc_id)

    halves = [[fl for fl in train if half_of(doc(fl)) == h] for h in (0, 1)]
    half_model = sf.fit_logistic(*sf.training_matrix(halves[0], examples), c)
    report = {
        "train_fixed_sum": sf.recall(train, scorer, None),
        "train_fitted": sf.recall(train, scorer, model),
        "held_half_fixed_sum": sf.recall(halves[1], scorer, None),
        "held_half_fitted_on_other_half": sf.recall(halves[1], scorer, half_model),
    }
    if check:
        report["check_fixed_sum"] = sf.recall(check, scorer, None)
        report["check_fitted"] = sf.recall(check, scorer, model)
    out.mkdir(parents=True, exist_ok=True)
    weights = out / "structure-rerank.weights.json"
    weights.write_text(json.dumps(model.to_json(), indent=1) + "\n", encoding="utf-8")
    record = {
        "file": weights.name,
        "sha256": file_sha256(weights),
        "what": "logistic weights over the document rerank's features (kg_platform/retrieval/"
        "structure_rerank.py FEATURES); a candidate's score is its log-odds of holding evidence",
        "data": {
            "sets": [
                {"pools": str(p), "dataset": str(d), **_manifest(d)}
                for p, d in zip(pools, datasets)
            ],
            "strategy": strategy,
            "lists": len(train),
            "rows_fitted": int(len(y)),
            "positives": int(y.sum()),
            "label": "a candidate holding a gold evidence sentence (any annotator)",
            "licence": "CC BY 4.0 (QASPER, Allen Institute for AI)",
        },
        "fit": {"c": c, "solver": "Newton, L2 on the weights, intercept free"},
        "recall_at_512_1024": report,
        "seconds": round(time.perf_counter() - started, 1),
        "command": "kgp lab rerank " + shlex.join(sys.argv[3:]),
    }
    (out / "structure-rerank.json").write_text(
        json.dumps(record, indent=1) + "\n", encoding="utf-8"
    )
    typer.echo(json.dumps({"coef": model.to_json()["coef"], **report}, indent=1))
