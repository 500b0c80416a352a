"""Recall against context tokens per strategy: the picture people use to choose a strategy.

Each strategy is a line through its cut points (k = 1..k, or budget/8..budget) from the report's
``curve``; the marker at the end is the reported operating point. matplotlib (one of the lab's
dependencies, ``pip install -e lab/``) is imported only here, with the non-interactive Agg
backend.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kg_platform.errors import EvaluationError

MARKERS = (".", "s", "^", "v", "D", "x", "*")
STYLES = ("-", "--", ":", "-.")


def plot_report(report: dict[str, Any], path: str | Path, *, title: str | None = None) -> Path:
    """Write a PNG with sentence and paragraph recall against mean context tokens."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ModuleNotFoundError as exc:
        raise EvaluationError(
            "--plot needs matplotlib",
            hint="pip install -e lab/ (matplotlib is one of the lab's dependencies)",
        ) from exc
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), sharey=True)
    panels = (
        ("sentence_recall", "supporting-sentence recall"),
        ("paragraph_recall", "supporting-paragraph recall"),
    )
    if all("evidence_recall" in b for b in report["strategies"].values()):
        panels = (
            ("evidence_token_coverage", "evidence-token coverage"),
            ("evidence_recall", "evidence recall (best annotator)"),
        )
    for ax, (metric, label) in zip(axes, panels):
        for i, (name, block) in enumerate(report["strategies"].items()):
            points = block.get("curve") or [
                {"context_tokens": block["context_tokens"], metric: block[metric]}
            ]
            xs = [p["context_tokens"] for p in points]
            ys = [p[metric] for p in points]
            # Distinct styles, so strategies that coincide (e.g. vector and its peer) stay visible.
            (line,) = ax.plot(
                xs,
                ys,
                marker=MARKERS[i % len(MARKERS)],
                markersize=4,
                linestyle=STYLES[i % len(STYLES)],
                label=name,
            )
            ax.plot(
                [block["context_tokens"]],
                [block[metric]],
                marker="o",
                markersize=8,
                color=line.get_color(),
            )
        ax.set_xlabel("mean context tokens per question")
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
        ax.set_ylim(0, 1.02)
    axes[1].legend(loc="lower right", fontsize=8)
    cut = (
        f"budget {report['budget_tokens']} tokens"
        if report.get("budget_tokens")
        else f"k=1..{report['k']}"
    )
    fig.suptitle(
        title or f"{Path(report['dataset']).name} ({report['questions']} questions, {cut})"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
