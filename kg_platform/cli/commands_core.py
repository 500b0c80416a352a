"""``kgp setup`` (the model in place), ``kgp init`` (schema) and ``kgp demo`` (the README's main job)."""

from __future__ import annotations

import typer

from kg_platform.cli.lazy import get_settings


def register(app: typer.Typer) -> None:
    app.command("setup")(setup)
    app.command("init")(init)
    app.command("demo")(demo)


def setup() -> None:
    """Put the default embedding model in place (a bare ``pip install`` of the product lacks it),
    build its ONNX graph once, and check what ``kgp neo4j start`` needs (Java 17, Maven)."""
    import shutil

    from kg_platform.embedding import get_embedder
    from kg_platform.embedding.install import install_default_model

    if not install_default_model(echo=typer.echo):
        typer.echo("the default embedding model is installed")
    embedder = get_embedder(get_settings().embedding)
    vector = embedder.embed(["kg-platform setup check"])[0]
    typer.echo(f"embedder ready: {embedder.model_name}, {len(vector)} dimensions")
    missing = [tool for tool in ("java", "mvn") if shutil.which(tool) is None]
    if missing:
        typer.echo(
            f"for a local Neo4j (`kgp neo4j start`) install {' and '.join(missing)}: "
            "sudo apt-get install -y openjdk-17-jre-headless maven; or set NEO4J_URI to a server"
        )
    else:
        typer.echo("java and mvn found: `kgp neo4j start` can run a local Neo4j 5.26")


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
