"""``kgp lab bench ingest --peer``: the same texts through langchain-neo4j's ``Neo4jVector``.

Why in the same run: ingestion rates depend on the machine's load at the moment, so the peer is
timed beside our pipeline, with the same embedder (wrapped as LangChain ``Embeddings``) and the
same Neo4j. The peer gets what a LangChain user would give it for QA paragraphs: each paragraph's
text once, with its title as metadata, one node each (``Neo4jVector.from_texts``). It writes to its
own label (:class:`PEER_LABEL`) and vector index, tagged with the bench run, so it never touches a
kg-platform corpus; everything it created is removed afterwards.
"""

from __future__ import annotations

import re
import time
from typing import Any

from kg_platform.config import Settings
from kg_platform.errors import ConfigError
from kg_platform.graph.client import GraphClient, resolve_connection
from kg_platform_lab.queries import lab_read, lab_write

__all__ = ["PEER_LABEL", "PEER_INDEX", "run_langchain_peer", "corpus_graph_size"]

PEER_LABEL = "KgpBenchLangChainPeer"
PEER_INDEX = "kgp_bench_langchain_peer"


def corpus_graph_size(graph: GraphClient, corpus: str) -> dict[str, Any]:
    """Nodes (by label set), relationships (by type) and vectors one kg-platform corpus stores."""
    from kg_platform.graph.corpus_indexes import corpus_prefix

    own = corpus_prefix(corpus)  # the corpus's own labels (its indexes) are not node kinds
    nodes: dict[str, int] = {}
    vectors = 0
    for row in lab_read(graph, "bench/graph_nodes", corpus=corpus):
        key = ":".join(sorted(label for label in row["labels"] if not label.startswith(own)))
        nodes[key] = nodes.get(key, 0) + int(row["nodes"])
        vectors += int(row["vectors"])
    rels = {
        r["type"]: int(r["relationships"])
        for r in lab_read(graph, "bench/graph_relationships", corpus=corpus)
    }
    return {
        "nodes": sum(nodes.values()),
        "relationships": sum(rels.values()),
        "vectors": vectors,
        "nodes_by_label": dict(sorted(nodes.items())),
        "relationships_by_type": dict(sorted(rels.items())),
    }


def _drop_peer_schema(graph: GraphClient) -> None:
    """Drop the peer's vector index and the id constraint ``from_texts`` creates.

    Schema commands take no parameters; the index name is ours and the constraint names come
    from ``SHOW CONSTRAINTS`` and are checked to be plain identifiers before use.
    """
    graph.write_raw(f"DROP INDEX {PEER_INDEX} IF EXISTS")
    rows = graph.read_raw(
        "SHOW CONSTRAINTS YIELD name, labelsOrTypes WHERE labelsOrTypes = [$label] RETURN name",
        label=PEER_LABEL,
    )
    for row in rows:
        name = str(row["name"])
        if re.fullmatch(r"[A-Za-z0-9_]+", name):
            graph.write_raw(f"DROP CONSTRAINT {name} IF EXISTS")


def run_langchain_peer(
    settings: Settings,
    graph: GraphClient,
    embedder: Any,
    texts: list[str],
    metadatas: list[dict[str, Any]],
    run: str,
) -> dict[str, Any]:
    """Ingest ``texts`` with ``Neo4jVector.from_texts``; return its rate and graph size."""
    try:
        from langchain_neo4j import Neo4jVector
    except ImportError as exc:
        raise ConfigError(
            "the ingestion peer needs langchain-neo4j",
            hint="pip install -e lab/ (langchain-neo4j is one of the lab's dependencies)",
        ) from exc
    from kg_platform.integrations.langchain import KGPlatformEmbeddings

    uri, (user, password), database = resolve_connection(settings)
    tagged = [{**m, "bench_run": run} for m in metadatas]
    try:
        started = time.perf_counter()
        store = Neo4jVector.from_texts(
            texts,
            KGPlatformEmbeddings(embedder),
            metadatas=tagged,
            url=uri,
            username=user,
            password=password,
            database=database,
            index_name=PEER_INDEX,
            node_label=PEER_LABEL,
            embedding_dimension=embedder.dimension,
        )
        wall = time.perf_counter() - started
        store._driver.close()
        size = lab_read(graph, "bench/peer_langchain_size", run=run)[0]
        return {
            "peer": "langchain-neo4j Neo4jVector.from_texts",
            "documents": len(texts),
            "peer_s": round(wall, 2),
            "documents_per_s": round(len(texts) / wall, 2) if wall > 0 else None,
            "nodes": int(size["nodes"]),
            "relationships": int(size["relationships"] or 0),
            "vectors": int(size["vectors"]),
            "stores": f"one :{PEER_LABEL} node per text with properties "
            f"{sorted(size['properties'] or [])}; no relationships",
        }
    finally:
        left = lab_write(graph, "bench/peer_langchain_delete", run=run)
        if not left or int(left[0]["left"]) == 0:
            _drop_peer_schema(graph)
