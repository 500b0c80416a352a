"""``kgp init`` (schema) and ``kgp demo`` (the README's main job)."""

from __future__ import annotations

import typer

from kg_platform.config import get_settings


def register(app: typer.Typer) -> None:
    app.command("init")(init)
    app.command("demo")(demo)


def init(
    drop_vector_indexes: bool = typer.Option(
        False, help="drop vector indexes first (after changing the embedding model)"),
) -> None:
    """Apply the schema migrations (constraints, fulltext and vector indexes)."""
    from kg_platform.embedding import get_embedder
    from kg_platform.graph import GraphClient
    from kg_platform.graph import schema

    settings = get_settings()
    embedder = get_embedder(settings.embedding)
    with GraphClient.from_settings(settings) as graph:
        if drop_vector_indexes:
            dropped = schema.drop_vector_indexes(graph)
            typer.echo(f"dropped {len(dropped)} vector indexes")
        version = schema.apply_migrations(graph, embedder.dimension, embedder.model_name)
    typer.echo(f"schema version {version} (vector dimension {embedder.dimension})")


def demo() -> None:
    """Start the local Neo4j (unless NEO4J_URI is set), apply the schema, ingest the samples,
    and answer a question."""
    from kg_platform.demo import run_demo

    run_demo(echo=typer.echo)
