"""``kgp demo`` / ``make demo``: the main job end to end on the shipped samples.

Starts the local Neo4j unless ``NEO4J_URI`` points elsewhere (reusing a running one), applies
the schema, ingests ``ingestion/samples/`` into the corpus ``samples``, and answers a question
(with the configured LLM, or with evidence sentences when none is configured).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from kg_platform.config import get_settings

SAMPLES = Path(__file__).resolve().parents[1] / "ingestion" / "samples"
DEMO_CORPUS = "samples"
DEMO_QUESTION = "What file formats can MarkItDown convert to Markdown?"


def run_demo(echo: Callable[[str], None] = print, question: str = DEMO_QUESTION) -> None:
    from kg_platform.embedding import get_embedder
    from kg_platform.graph import GraphClient
    from kg_platform.graph.schema import apply_migrations
    from kg_platform.neo4j_server import LocalNeo4j

    settings = get_settings()
    if settings.neo4j.uri:
        echo(f"Using the external Neo4j at {settings.neo4j.uri} (NEO4J_URI)")
    else:
        server = LocalNeo4j(settings)
        status = server.status()
        if not status.running:
            echo("Starting the local Neo4j (first run downloads it from Maven Central)...")
            status = server.start()
        echo(f"Bolt:    {status.bolt_uri}")
        echo(f"Browser: {status.browser_url}  (user neo4j, password: `kgp neo4j password`)")

    embedder = get_embedder(settings.embedding)
    with GraphClient.from_settings(settings) as graph:
        version, edition = graph.components()
        echo(f"Neo4j {version} {edition}")
        schema = apply_migrations(graph, embedder.dimension, embedder.model_name)
        echo(f"Schema version {schema} (vectors: {embedder.model_name}, {embedder.dimension}-d)")

        from kg_platform.ingest import ingest_paths

        report = ingest_paths(
            graph, settings, [SAMPLES], corpus=DEMO_CORPUS, exclude=["SOURCES.md"]
        )
        echo(report.summary())

        from kg_platform.sdk import KnowledgePlatform

        platform = KnowledgePlatform(settings=settings, graph=graph)
        answer = platform.ask(question, corpus=DEMO_CORPUS)
        echo(f"\nQ: {question}")
        echo(answer.render())
