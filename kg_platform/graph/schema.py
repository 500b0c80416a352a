"""Numbered, idempotent schema migrations from ``cypher/schema/NNNN_name.cypher``.

Every statement uses ``IF NOT EXISTS``, so applying twice is a no-op; each applied file is recorded
as ``(:SchemaMigration {version, name, applied_at})`` and the current state as
``(:SchemaInfo {id: 'schema'})`` with the embedding dimension the vector indexes were built for.
Before anything is created, existing vector indexes are compared with the embedder's dimension: a
mismatch raises :class:`VectorDimensionMismatch` instead of silently mixing vector spaces.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from neo4j import ManagedTransaction

from kg_platform.errors import GraphError, SchemaError, VectorDimensionMismatch
from kg_platform.graph.client import GraphClient
from kg_platform.graph.cypher import split_statements

_FILE = re.compile(r"^(\d{4})_([a-z0-9_]+)\.cypher$")

#: MoG levels that have their own labels and indexes (L1..L6); segment.levels may not exceed this.
MAX_LEVELS = 6


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    statements: tuple[str, ...]


def load_migrations(dimension: int) -> list[Migration]:
    if not isinstance(dimension, int) or dimension <= 0:
        raise SchemaError(f"vector dimension must be a positive integer, got {dimension!r}")
    folder = resources.files("kg_platform").joinpath("cypher", "schema")
    migrations = []
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        match = _FILE.match(entry.name)
        if not match:
            continue
        text = entry.read_text(encoding="utf-8").replace("{dimension}", str(dimension))
        migrations.append(
            Migration(int(match.group(1)), match.group(2), tuple(split_statements(text)))
        )
    versions = [m.version for m in migrations]
    if len(set(versions)) != len(versions):
        # applied versions are recorded by number: a second file of one number would be
        # skipped forever once the first is applied
        twice = sorted(
            {f"{m.version:04d}_{m.name}" for m in migrations if versions.count(m.version) > 1}
        )
        raise SchemaError(
            f"two schema migrations share a number: {', '.join(twice)}",
            hint="renumber one of them (kg_platform/cypher/schema/NNNN_name.cypher)",
        )
    return migrations


def existing_vector_dimensions(graph: GraphClient) -> dict[str, int]:
    rows = graph.read_raw(
        "SHOW VECTOR INDEXES YIELD name, options "
        "RETURN name, options.indexConfig['vector.dimensions'] AS dim"
    )
    return {r["name"]: int(r["dim"]) for r in rows if r["dim"] is not None}


def check_dimension(graph: GraphClient, dimension: int) -> None:
    wrong = {
        name: dim for name, dim in existing_vector_dimensions(graph).items() if dim != dimension
    }
    if wrong:
        listing = ", ".join(f"{n} ({d}-d)" for n, d in sorted(wrong.items()))
        raise VectorDimensionMismatch(
            f"the embedder produces {dimension}-d vectors but existing vector indexes expect "
            f"another size: {listing}",
            hint="use the embedding model the graph was built with (KGP_EMBEDDING__MODEL), or "
            "rebuild: `kgp init --drop-vector-indexes` then re-ingest to re-embed",
        )


def applied_versions(graph: GraphClient) -> set[int]:
    rows = graph.read_raw("MATCH (m:SchemaMigration) RETURN m.version AS v")
    return {int(r["v"]) for r in rows}


def drop_vector_indexes(graph: GraphClient) -> list[str]:
    names = list(existing_vector_dimensions(graph))
    for name in names:
        # Index names come from SHOW INDEXES (our own schema), not from user input.
        graph.write_raw(f"DROP INDEX `{name}` IF EXISTS")
    graph.write_raw("MATCH (m:SchemaMigration) WHERE m.name = 'vector' DELETE m")
    return names


#: What Neo4j answers when another transaction created the same index or constraint between
#: this statement's ``IF NOT EXISTS`` check and its commit.
_RACED = (
    "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists",
    "Neo.ClientError.Schema.IndexAlreadyExists",
    "Neo.ClientError.Schema.ConstraintAlreadyExists",
)


def _raced(exc: GraphError) -> bool:
    """Whether ``exc`` (the client's wrapper; Neo4j's own error is its cause) is such a race."""
    return getattr(exc.__cause__, "code", None) in _RACED


def apply_statement(graph: GraphClient, statement: str) -> None:
    """Run one schema statement; another process having just created the same rule is success.

    Why: ``IF NOT EXISTS`` is checked when the statement starts, so two processes migrating a
    fresh database at once (two `kgp` commands, ingestion workers) can both pass the check, and
    the second commit then fails with "an equivalent index already exists" (seen when two `kgp
    eval` runs started on one new database). The rule exists either way, as the migration wants.
    """
    try:
        graph.write_raw(statement)
    except GraphError as exc:
        if not _raced(exc):
            raise


def apply_statements(graph: GraphClient, statements: Sequence[str]) -> None:
    """Run schema statements in one transaction; when another process created one of the same
    rules meanwhile, run them one at a time (:func:`apply_statement`), which takes that as success.

    Why: every schema commit costs a commit of its own and is a schema change, after which
    Neo4j plans its queries again; a corpus's indexes (``graph/corpus_indexes.py``) take less
    time in one commit than in one each."""
    statements = list(statements)

    def work(tx: ManagedTransaction) -> None:
        for statement in statements:
            tx.run(statement).consume()

    try:
        graph.in_transaction(work)
    except GraphError as exc:
        if not _raced(exc):
            raise
        for statement in statements:
            apply_statement(graph, statement)


def apply_migration(graph: GraphClient, migration: Migration) -> None:
    """Apply one migration's statements and record it as applied."""
    for statement in migration.statements:
        try:
            apply_statement(graph, statement)
        except Exception as exc:
            raise SchemaError(
                f"migration {migration.version:04d}_{migration.name} failed on:\n{statement}\n{exc}"
            ) from exc
    graph.write_raw(
        "MERGE (m:SchemaMigration {version: $version}) "
        "ON CREATE SET m.name = $name, m.applied_at = datetime()",
        version=migration.version,
        name=migration.name,
    )


def apply_migrations(graph: GraphClient, dimension: int, model: str = "") -> int:
    """Apply pending migrations; return the schema version now in force."""
    check_dimension(graph, dimension)
    done = applied_versions(graph)
    migrations = load_migrations(dimension)
    for migration in migrations:
        # Statements are idempotent, so re-running an applied file is safe; we still skip them
        # to keep `kgp init` quiet and fast.
        if migration.version in done:
            continue
        apply_migration(graph, migration)
    version = max((m.version for m in migrations), default=0)
    graph.write_raw(
        "MERGE (s:SchemaInfo {id: 'schema'}) SET s.version = $version, "
        "s.embedding_dimension = $dimension, s.embedding_model = $model, s.updated_at = datetime()",
        version=version,
        dimension=dimension,
        model=model,
    )
    graph.write_raw("CALL db.awaitIndexes(300)")
    return version


def schema_version(graph: GraphClient) -> int | None:
    rows = graph.read_raw("MATCH (s:SchemaInfo {id: 'schema'}) RETURN s.version AS v")
    return int(rows[0]["v"]) if rows else None
