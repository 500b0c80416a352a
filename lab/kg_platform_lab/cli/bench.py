"""``kgp lab bench ...``: benchmarks that print ratios against a baseline measured in the same run.

Each lab module adds its own sub-commands to the group from its ``register()``.
"""

from __future__ import annotations

import typer

from kg_platform.cli.groups import group

BENCH_HELP = "Benchmarks (ratios against a baseline measured in the same run)."


def bench_group(app: typer.Typer) -> typer.Typer:
    """The ``bench`` group of ``app`` (created by whichever module registers first)."""
    return group(app, "bench", BENCH_HELP)
