"""The outputs of an evaluation: the stable JSON report, per-question JSONL and the table.

JSON contract (other tools read it; add keys, never rename or drop)::

    {"dataset": str, "questions": int, "k": int, "budget_tokens": int | null,
     "strategies": {NAME: {"paragraph_recall": float, "sentence_recall": float,
                           "all_supporting_found": float, "mrr": float, "context_tokens": float,
                           "latency_ms_p50": float, "latency_ms_p95": float, "n": int,
                           ...additive: "errors", "curve", "recall_at_5_passages",
                           "all_found_at_5_passages"}},
     ...additive: "schema_version", "corpus", "corpus_chunks", "skipped_empty_gold",
                  "fetch_k", "select", "ingest", "wall_s", "created"}

``questions`` is the number of questions read (after ``--limit``); ``n`` per strategy is the
number scored (questions with empty gold are skipped and counted in ``skipped_empty_gold``).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg_platform_lab.evaluation.metrics import aggregate

if TYPE_CHECKING:
    from kg_platform_lab.evaluation.harness import EvalResult

SCHEMA_VERSION = 1
REQUIRED_STRATEGY_KEYS: dict[str, type | tuple[type, ...]] = {
    "paragraph_recall": float,
    "sentence_recall": float,
    "all_supporting_found": float,
    "mrr": float,
    "context_tokens": float,
    "latency_ms_p50": float,
    "latency_ms_p95": float,
    "n": int,
}
REQUIRED_TOP_KEYS: dict[str, type | tuple[type, ...]] = {
    "dataset": str,
    "questions": int,
    "k": int,
    "budget_tokens": (int, type(None)),
    "strategies": dict,
}


def report_json(result: "EvalResult", curves: dict[str, list[dict[str, float]]]) -> dict[str, Any]:
    """The report of ``result``; ``curves`` (recall against context tokens per strategy) are
    computed by the harness, which owns the cutting rules."""
    cfg = result.config
    strategies: dict[str, Any] = {}
    for name, run in result.runs.items():
        block = aggregate(run.scores, run.latencies_ms)
        block["errors"] = len(run.errors)
        block["curve"] = curves[name]
        if run.passage_scores:  # QA files: the published cut, beside the token budget's
            at5 = aggregate(run.passage_scores, [])
            block["recall_at_5_passages"] = at5["paragraph_recall"]
            block["all_found_at_5_passages"] = at5["all_supporting_found"]
        by_gold = recall_by_gold_paragraphs(result.examples, run.scores)
        if by_gold:  # document QA: one-paragraph and multi-paragraph questions apart
            block["evidence_recall_by_gold_paragraphs"] = by_gold
        if run.router_levels:  # MoG / MoGG: the chosen level per question, counted
            levels = [g for _, g in run.router_levels]
            block["router_levels"] = {str(g): levels.count(g) for g in sorted(set(levels))}
            block["router_source"] = sorted({src for src, _ in run.router_levels})
        if run.path:  # `default`: which strategy and selection ran under that name
            block["path"] = run.path
        strategies[name] = block
    return {
        "dataset": str(cfg.dataset),
        "questions": len(result.examples) + result.skipped,
        "k": cfg.k,
        "budget_tokens": cfg.budget_tokens,
        "strategies": strategies,
        "schema_version": SCHEMA_VERSION,
        "corpus": cfg.corpus,
        "corpus_chunks": result.corpus_chunks,
        "skipped_empty_gold": result.skipped,
        "fetch_k": cfg.fetch_size(),
        "select": cfg.select,
        "ingest": result.ingest,
        "wall_s": round(result.wall_s, 3),
        "scope": cfg.scope,
        "skipped_missing_document": result.missing_documents,
        "held_out": str(cfg.held_out) if cfg.held_out else None,
        "distractors": str(cfg.distractors) if cfg.distractors else None,
        "excluded_trained": result.excluded_trained,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def gold_paragraphs(example: object) -> int | None:
    """The fewest gold paragraphs any annotator needed for a document-QA question (None for a
    QA-file question, whose gold is facts, not paragraphs)."""
    sets = [s for s in getattr(example, "evidence_sets", None) or [] if s]
    return min(len(s) for s in sets) if sets else None


def recall_by_gold_paragraphs(examples: list[Any], scores: list[Any]) -> dict[str, dict[str, Any]]:
    """Evidence recall of the questions needing 1, 2 and 3+ gold paragraphs, apart.

    Why: two question sets can rank one change in opposite orders, and their mix of one- and
    multi-paragraph questions is the first thing to rule out (docs/retrieval.md, session 14:
    it did not explain the 81 / 225 split there). Empty for QA files."""
    groups: dict[str, list[float]] = {}
    for ex, score in zip(examples, scores):
        n = gold_paragraphs(ex)
        if n is None or score.evidence_recall is None:
            continue
        groups.setdefault(str(n) if n < 3 else "3+", []).append(score.evidence_recall)
    return {
        key: {"n": len(v), "evidence_recall": sum(v) / len(v)} for key, v in sorted(groups.items())
    }


def validate_report(report: dict[str, Any]) -> list[str]:
    """Problems with ``report`` against the stable contract (empty list = valid)."""
    problems = []
    for key, typ in REQUIRED_TOP_KEYS.items():
        if key not in report:
            problems.append(f"missing top-level key {key!r}")
        elif not isinstance(report[key], typ) or isinstance(report[key], bool):
            problems.append(f"{key!r} has type {type(report[key]).__name__}")
    for name, block in (report.get("strategies") or {}).items():
        for key, typ in REQUIRED_STRATEGY_KEYS.items():
            if key not in block:
                problems.append(f"strategy {name!r}: missing {key!r}")
            elif not isinstance(block[key], typ) or isinstance(block[key], bool):
                problems.append(f"strategy {name!r}: {key!r} has type {type(block[key]).__name__}")
    return problems


def per_question_rows(result: "EvalResult") -> list[dict[str, Any]]:
    """One row per (question, strategy) with the ranked ids and which gold facts each hit."""
    rows = []
    for name, run in result.runs.items():
        for ex, score, latency in zip(result.examples, run.scores, run.latencies_ms):
            rows.append(
                {
                    "id": ex.id,
                    "question": ex.question,
                    "strategy": name,
                    "gold": [[f.title, f.sentence] for f in ex.gold],
                    "ids": score.ids,
                    "hits": score.hits,
                    "first_hit_rank": score.first_hit_rank,
                    "sentence_recall": score.sentence_recall,
                    "paragraph_recall": score.paragraph_recall,
                    "all_supporting_found": score.all_supporting_found,
                    "rr": score.rr,
                    "context_tokens": score.context_tokens,
                    "latency_ms": round(latency, 3),
                }
            )
            if score.evidence_recall is not None:
                rows[-1].update(
                    doc_id=getattr(ex, "doc_id", None),
                    gold_paragraphs=gold_paragraphs(ex),
                    evidence_recall=score.evidence_recall,
                    evidence_token_coverage=score.evidence_token_coverage,
                )
    return rows


def write_json(report: dict[str, Any], path: str | Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


def write_per_question(result: "EvalResult", path: str | Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for row in per_question_rows(result):
            fh.write(json.dumps(row) + "\n")


COLUMNS = [
    ("paragraph_recall", "para R", "{:.3f}"),
    ("sentence_recall", "sent R", "{:.3f}"),
    ("all_supporting_found", "all found", "{:.3f}"),
    ("mrr", "MRR", "{:.3f}"),
    ("context_tokens", "ctx tok", "{:.0f}"),
    ("latency_ms_p50", "p50 ms", "{:.1f}"),
    ("latency_ms_p95", "p95 ms", "{:.1f}"),
    ("n", "n", "{}"),
]


EVIDENCE_COLUMNS = [
    ("evidence_recall", "evid R", "{:.3f}"),
    ("evidence_token_coverage", "evid tok", "{:.3f}"),
]


PASSAGE_COLUMNS = [
    ("recall_at_5_passages", "R@5 psg", "{:.3f}"),
    ("all_found_at_5_passages", "all@5 psg", "{:.3f}"),
]


def _columns(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    """The table's columns: document QA adds evidence recall and token coverage up front; QA
    files add recall and all-found at 5 passages (the published figures' cut) after the run's."""
    blocks = list((report.get("strategies") or {}).values())
    if blocks and all("evidence_recall" in b for b in blocks):
        return EVIDENCE_COLUMNS + [c for c in COLUMNS if c[0] != "paragraph_recall"]
    if blocks and all("recall_at_5_passages" in b for b in blocks):
        at = 3  # after paragraph recall, sentence recall, all found
        return COLUMNS[:at] + PASSAGE_COLUMNS + COLUMNS[at:]
    return COLUMNS


def table_text(report: dict[str, Any]) -> str:
    """A plain Markdown table of the report (for notes, logs and non-terminal output)."""
    cut = (
        f"budget {report['budget_tokens']} tokens"
        if report.get("budget_tokens")
        else f"k={report['k']}"
    )
    lines = [
        f"{Path(report['dataset']).name}: {report['questions']} questions, {cut}",
        "| strategy | " + " | ".join(c[1] for c in _columns(report)) + " |",
        "|---" * (len(_columns(report)) + 1) + "|",
    ]
    for name, block in report["strategies"].items():
        cells = [fmt.format(block[key]) for key, _, fmt in _columns(report)]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def render_table(report: dict[str, Any]) -> Any:
    """A rich Table of the report, for the terminal."""
    from rich.table import Table

    cut = (
        f"budget {report['budget_tokens']} tokens"
        if report.get("budget_tokens")
        else f"k={report['k']}"
    )
    table = Table(title=f"{Path(report['dataset']).name} - {report['questions']} questions, {cut}")
    table.add_column("strategy")
    for _, label, _ in _columns(report):
        table.add_column(label, justify="right")
    for name, block in report["strategies"].items():
        table.add_row(name, *[fmt.format(block[key]) for key, _, fmt in _columns(report)])
    return table
