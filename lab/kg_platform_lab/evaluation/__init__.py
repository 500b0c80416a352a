"""Evaluation: QA datasets with gold supporting facts, metrics, the harness behind ``kgp lab eval``,
its stable JSON report and the recall-vs-context plot.

Typical use::

    from kg_platform_lab.evaluation import EvalConfig, run_evaluation
    result = run_evaluation(EvalConfig(dataset=path, strategies=["bm25", "vector"]),
                            graph, embedder, settings)
    report = result.to_json()
"""

from kg_platform_lab.evaluation.datasets import QAExample, load_dataset
from kg_platform_lab.evaluation.harness import EvalConfig, EvalResult, run_evaluation
from kg_platform_lab.evaluation.metrics import GoldFact, Ranked, normalise, score_question
from kg_platform_lab.evaluation.report import table_text, validate_report

__all__ = [
    "EvalConfig",
    "EvalResult",
    "GoldFact",
    "QAExample",
    "Ranked",
    "load_dataset",
    "normalise",
    "run_evaluation",
    "score_question",
    "table_text",
    "validate_report",
]
