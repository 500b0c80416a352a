"""A real local Neo4j 5.26 LTS Community server, obtained from Maven Central.

Maven Central does not serve the packaged tarball (``org.neo4j.assembly:neo4j-community``), but it
does serve every jar of the server. :mod:`kg_platform.neo4j_server.manager` copies them with Maven
into the user cache (once), writes a ``neo4j.conf`` bound to 127.0.0.1, sets a generated password,
and launches ``org.neo4j.server.CommunityEntryPoint`` — the same class the ``neo4j`` script runs —
with the Neo4j Browser jar on the class path, so Browser is served at ``/browser/``.
"""

from kg_platform.neo4j_server.manager import LocalNeo4j, ServerStatus

__all__ = ["LocalNeo4j", "ServerStatus"]
