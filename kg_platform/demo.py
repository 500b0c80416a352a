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
    """Everything after the server start goes through :class:`KnowledgePlatform`, the SDK's
    front door, so the demo exercises exactly what a user's script or the CLI runs."""
    from kg_platform.neo4j_server import LocalNeo4j
    from kg_platform.sdk import KnowledgePlatform

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

    with KnowledgePlatform(settings=settings) as platform:
        version, edition = platform.graph.components()
        echo(f"Neo4j {version} {edition}")
        schema = platform.init_schema()
        embedder = platform.embedder
        echo(f"Schema version {schema} (vectors: {embedder.model_name}, {embedder.dimension}-d)")

        report = platform.ingest([SAMPLES], DEMO_CORPUS, exclude=["SOURCES.md"])
        echo(report.summary())

        answer = platform.ask(question, corpus=DEMO_CORPUS)
        echo(f"\nQ: {question}")
        echo(answer.render())
