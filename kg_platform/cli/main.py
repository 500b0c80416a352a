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

    from kg_platform.cli.bench import bench_app

    app.add_typer(commands_neo4j.app, name="neo4j")
    commands_core.register(app)
    # Optional groups register themselves if their module exists (added as features land).
    import importlib

    for module in ("commands_ingest", "commands_eval", "commands_retrieve", "commands_llm",
                   "commands_jobs", "commands_segment", "commands_reason", "commands_browser",
                   "commands_load"):
        try:
            mod = importlib.import_module(f"kg_platform.cli.{module}")
        except ModuleNotFoundError as exc:
            if exc.name != f"kg_platform.cli.{module}":
                raise
            continue
        mod.register(app)
    app.add_typer(bench_app, name="bench")


_register()


def _configure_logging() -> None:
    """WARNING by default (``KGP_LOG=info|debug`` for more). The Neo4j driver's own retry and
    connection messages are hidden unless asked for: when the server dies, the user should read
    one line saying so, not a dozen driver retries (the error carries the reason)."""
    import os

    name = os.environ.get("KGP_LOG", "warning").strip().upper() or "WARNING"
    level = getattr(logging, name, logging.WARNING)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    if level > logging.INFO:
        logging.getLogger("neo4j").setLevel(logging.CRITICAL)


def main() -> None:
    _configure_logging()
    try:
        app()
    except KGPError as exc:
        typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
