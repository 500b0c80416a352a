"""Write the late rerank's weights file (``kg_platform/models/rerank/late-weights.json``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

from kg_platform_lab.rerank.fit import StrategyFit


def write_weights(path: Path, fits: Sequence[StrategyFit], report: dict[str, Any]) -> None:
    """Per-strategy weights, ``default`` (for strategies without their own entry) from the
    strategy named by ``report["default_from"]``, and what they were fitted on."""
    by_name = {f.strategy: f for f in fits}
    source = by_name.get(report.get("default_from", ""))
    body = {
        "about": "late-rerank weights per strategy (kg_platform.retrieval.rerank.weights); "
        "reproduce with `kgp lab rerank collect` + `kgp lab rerank fit` (lab/docs/evaluation.md)",
        "fitted": date.today().isoformat(),
        "fitted_on": {
            "datasets": [Path(d).name for d in report["datasets"]],
            "questions": {f.strategy: f.questions for f in fits},
            "budgets": report["budgets"],
            "n_candidates": {f.strategy: f.n_candidates for f in fits},
            "objective": "mean evidence/paragraph recall over the budgets, rerank as shipped",
            "data_licence": "QASPER: CC BY 4.0 (Allen Institute for AI)",
        },
        "default_from": source.strategy if source else None,
        "default": source.best.to_dict() if source else {"cosine": 1.0, "maxsim": 1.0},
        "strategies": {name: f.best.to_dict() for name, f in sorted(by_name.items())},
        # the rerank reorders each strategy's first n as fitted (rerank_weights.candidates_for)
        "candidates": {name: f.n_candidates for name, f in sorted(by_name.items())},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
