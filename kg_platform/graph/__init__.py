"""Neo4j access: the one module that owns the driver, named Cypher, schema migrations, writers."""

from kg_platform.graph.client import GraphClient
from kg_platform.graph.cypher import cypher

__all__ = ["GraphClient", "cypher"]
