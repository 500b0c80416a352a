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


PLUGIN_GROUP = "kg_platform.cli"


def _register() -> None:
    from kg_platform.cli import (
        commands_browser,
        commands_core,
        commands_corpus,
        commands_ingest,
        commands_jobs,
        commands_llm,
        commands_neo4j,
        commands_reason,
        commands_retrieve,
        commands_runs,
        commands_serve,
    )

    app.add_typer(commands_neo4j.app, name="neo4j")
    for module in (
        commands_core,
        commands_ingest,
        commands_runs,
        commands_corpus,
        commands_retrieve,
        commands_llm,
        commands_jobs,
        commands_reason,
        commands_browser,
        commands_serve,
    ):
        module.register(app)
    _register_plugins()


def _register_plugins() -> None:
    """Commands of other installed parts (the lab's eval, bench, training), by entry point.

    The product names no plug-in: a part that is not installed, or whose package is missing,
    is skipped, so the product's commands never depend on it.
    """
    from importlib.metadata import entry_points

    for ep in entry_points(group=PLUGIN_GROUP):
        try:
            register = ep.load()
        except ModuleNotFoundError as exc:
            if exc.name and ep.value.split(":")[0].startswith(exc.name):
                continue  # the plug-in's package is not installed
            raise
        register(app)


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
    from kg_platform.cli import driver_imports

    driver_imports.install()
    from kg_platform.cli.corpus_option import guard_corpus_options

    try:
        guard_corpus_options(typer.main.get_command(app))()
    except KGPError as exc:
        typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
