"""``kgp init`` (schema) and ``kgp demo`` (the README's main job)."""

from __future__ import annotations

import typer

from kg_platform.cli.lazy import get_settings


def register(app: typer.Typer) -> None:
    app.command("init")(init)
    app.command("demo")(demo)


def init(
    drop_vector_indexes: bool = typer.Option(
        False, help="drop vector indexes first (after changing the embedding model)"
    ),
) -> None:
    """Apply the schema migrations (constraints, fulltext and vector indexes)."""
    from kg_platform.sdk.platform import KnowledgePlatform

    with KnowledgePlatform(get_settings()) as kp:
        if drop_vector_indexes:
            typer.echo(f"dropped {len(kp.drop_vector_indexes())} vector indexes")
        version = kp.init_schema()
        dimension = kp.embedder.dimension
    typer.echo(f"schema version {version} (vector dimension {dimension})")


def demo() -> None:
    """Start the local Neo4j (unless NEO4J_URI is set), apply the schema, ingest the samples,
    and answer a question."""
    from kg_platform.demo import run_demo

    run_demo(echo=typer.echo)
