"""One retrieval pipeline: the SDK, the reasoner and the lab's harness all retrieve through
:func:`kg_platform.retrieval.pipeline.retrieve`, and nothing else puts a strategy, a selection
and the enrichment together by hand.

Read from the code (AST), so a second assembly fails here with the module that made it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import kg_platform

PRODUCT = Path(kg_platform.__file__).resolve().parent
LAB = PRODUCT.parent / "lab" / "kg_platform_lab"

#: The pipeline's steps after the strategy: only the pipeline (and the selection module that
#: defines them) may call them.
STEP_FUNCTIONS = {
    "apply_selection",
    "rank_and_keep",
    "late_rerank",
    "sage_rerank",
    "sage_keep",
    "rerank_scores",
    "enrich_items",
}
OWNERS = {PRODUCT / "retrieval" / "pipeline.py", PRODUCT / "retrieval" / "rerank" / "selection.py"}
#: The callers the pipeline exists for.
CALLERS = [
    PRODUCT / "sdk" / "reading.py",
    PRODUCT / "reasoning" / "pipeline.py",
    LAB / "evaluation" / "harness.py",
]


def _modules() -> list[Path]:
    return sorted(PRODUCT.rglob("*.py")) + sorted(LAB.rglob("*.py") if LAB.is_dir() else [])


def _called_names(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            names.add(f.id if isinstance(f, ast.Name) else getattr(f, "attr", ""))
    return names


def _string_constants(tree: ast.AST) -> set[str]:
    return {
        n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    }


def _imports_pipeline_retrieve(tree: ast.AST) -> bool:
    return any(
        isinstance(n, ast.ImportFrom)
        and n.module == "kg_platform.retrieval.pipeline"
        and any(a.name == "retrieve" for a in n.names)
        for n in ast.walk(tree)
    )


def test_only_the_pipeline_runs_the_steps_after_the_strategy() -> None:
    offenders = {}
    for path in _modules():
        if path in OWNERS:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        steps = _called_names(tree) & STEP_FUNCTIONS
        if "retrieval/item_context" in _string_constants(tree):
            steps.add("retrieval/item_context")
        if steps:
            offenders[str(path.relative_to(PRODUCT.parent))] = sorted(steps)
    assert offenders == {}, f"a second retrieval assembly: {offenders}"


def test_the_sdk_the_reasoner_and_the_harness_call_the_pipeline() -> None:
    for path in CALLERS:
        if not path.exists():  # the harness is in the lab, which may not be installed here
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        assert _imports_pipeline_retrieve(tree), f"{path} does not retrieve through the pipeline"
        assert "retrieve" in _called_names(tree), path


def test_the_check_catches_a_hand_made_assembly() -> None:
    """The detector itself: a module that reranks and enriches by hand is reported."""
    tree = ast.parse(
        "from kg_platform.retrieval.rerank.selection import late_rerank\n"
        "def search(q, items, ctx):\n"
        "    items = late_rerank(q, items, ctx)\n"
        "    ctx.graph.read('retrieval/item_context', ids=[i.id for i in items])\n"
    )
    assert _called_names(tree) & STEP_FUNCTIONS == {"late_rerank"}
    assert "retrieval/item_context" in _string_constants(tree)
    assert not _imports_pipeline_retrieve(tree)
