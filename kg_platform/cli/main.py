"""The ``kgp`` command line. Each sub-command group lives in its own module and registers here."""

from __future__ import annotations

import logging
import sys

import typer

from kg_platform.errors import KGPError

app = typer.Typer(
    name="kgp",
    help="kg-platform: a Neo4j-centric knowledge platform for retrieval-augmented generation.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _register() -> None:
    from kg_platform.cli import commands_neo4j, commands_core

    from kg_platform.lab.cli.bench import bench_app

    app.add_typer(commands_neo4j.app, name="neo4j")
    commands_core.register(app)
    # Optional groups register themselves if their module exists (added as features land).
    import importlib

    for module in ("cli.commands_ingest", "lab.cli.commands_eval", "cli.commands_retrieve",
                   "cli.commands_llm", "cli.commands_jobs", "lab.cli.commands_segment",
                   "cli.commands_reason", "cli.commands_browser", "lab.cli.commands_load"):
        try:
            mod = importlib.import_module(f"kg_platform.{module}")
        except ModuleNotFoundError as exc:
            if exc.name != f"kg_platform.{module}":
                raise
            continue
        mod.register(app)
    app.add_typer(bench_app, name="bench")


_register()


def main() -> None:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        app()
    except KGPError as exc:
        typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
