"""The lab's commands, all under ``kgp lab``: eval, eval-table, compare, ingest-qa, bench,
router and segmenter training, decomposer data.

The product CLI never imports this package by name: it loads :func:`register` through the
``kg_platform.cli`` entry-point group (``lab/pyproject.toml``), so a product installed without
the lab has no ``kgp lab`` at all and every product command works the same.
"""

from __future__ import annotations

import typer


LAB_HELP = (
    "The lab: evaluation, benchmarks, router/segmenter training and decomposer data "
    "(the kg-platform-lab package)."
)


def _apply_lab_tuning() -> None:
    """Before any ``kgp lab`` command: the ``[lab.tuning]`` values over the product's fitted
    constants (:mod:`kg_platform.tuning`)."""
    from kg_platform_lab.settings import apply_lab_tuning

    apply_lab_tuning()


def register(app: typer.Typer) -> None:
    """Add the ``kgp lab`` group, holding every lab command, to the ``kgp`` app."""
    from kg_platform.cli.groups import group
    from kg_platform_lab.cli import (
        commands_bench_cli,
        commands_bench_embed,
        commands_bench_ingest,
        commands_compare,
        commands_decomposer,
        commands_eval,
        commands_eval_parsing,
        commands_eval_table,
        commands_fingerprint,
        commands_ingest_qa,
        commands_load,
        commands_rerank,
        commands_router,
        commands_router_default,
        commands_sample,
        commands_segment,
    )

    lab_app = group(app, "lab", LAB_HELP)
    lab_app.callback()(_apply_lab_tuning)
    for module in (
        commands_eval,
        commands_eval_table,
        commands_eval_parsing,
        commands_compare,
        commands_ingest_qa,
        commands_sample,
        commands_router,
        commands_router_default,
        commands_rerank,
        commands_bench_ingest,
        commands_bench_embed,
        commands_bench_cli,
        commands_segment,
        commands_load,
        commands_decomposer,
        commands_fingerprint,
    ):
        module.register(lab_app)
