"""The lab's ``kgp`` commands: eval, eval-table, compare, bench, router training, segmenter training, decomposer data.

The product CLI never imports this package by name: it loads :func:`register` through the
``kg_platform.cli`` entry-point group (``pyproject.toml``), so an install without the lab, or a
lab that fails to import, leaves every product command working.
"""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add the lab's commands and groups to the ``kgp`` app."""
    from kg_platform.lab.cli import (
        commands_bench_ingest,
        commands_compare,
        commands_decomposer,
        commands_eval,
        commands_eval_table,
        commands_load,
        commands_router,
        commands_router_default,
        commands_segment,
    )

    for module in (
        commands_eval,
        commands_eval_table,
        commands_compare,
        commands_router,
        commands_router_default,
        commands_bench_ingest,
        commands_segment,
        commands_load,
        commands_decomposer,
    ):
        module.register(app)
