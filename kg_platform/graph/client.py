"""The one owner of the Neo4j driver.

``GraphClient`` resolves where Neo4j is (``NEO4J_URI`` & co, else the local server started by
``kgp neo4j start``), runs named statements in managed transactions (the driver retries transient
failures, e.g. a cluster leader switch), and writes large lists in ``UNWIND`` batches.

Reads run in read transactions, so with a ``neo4j://`` / ``neo4j+s://`` URI (clusters, Aura) the
driver routes them to secondaries. Every session of one client shares a bookmark manager: each
statement waits until the member it runs on has applied everything this client committed before,
so a read right after a write (the piece-graph sync after a source write, a retrieval right after
an ingest) never sees a secondary that lags behind.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from neo4j import Driver, GraphDatabase, ManagedTransaction, Record
from neo4j.exceptions import AuthError, DriverError, Neo4jError, ServiceUnavailable

from kg_platform.config import Settings, get_settings
from kg_platform.errors import ConfigError, GraphError
from kg_platform.graph.cypher import cypher

log = logging.getLogger(__name__)


def resolve_connection(settings: Settings) -> tuple[str, tuple[str, str], str]:
    """(uri, auth, database) from the settings, or from the local server's home."""
    cfg = settings.neo4j
    if cfg.uri:
        if cfg.password is None:
            raise ConfigError(
                f"NEO4J_URI is set ({cfg.uri}) but NEO4J_PASSWORD is not",
                hint="export NEO4J_PASSWORD=... for the external server",
            )
        return cfg.uri, (cfg.username, cfg.password.get_secret_value()), cfg.database
    from kg_platform.neo4j_server import LocalNeo4j

    local = LocalNeo4j(settings)
    status = local.status()
    if not status.running:
        raise GraphError(
            "no Neo4j to talk to: NEO4J_URI is not set and the local server is not running",
            hint="run `kgp neo4j start`, or export NEO4J_URI/NEO4J_USERNAME/NEO4J_PASSWORD",
        )
    return local.bolt_uri(), ("neo4j", local.password()), cfg.database


def _batches(rows: Iterable[Any], size: int) -> Iterator[list[Any]]:
    batch: list[Any] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


class GraphClient:
    """Runs parameterised Cypher against one database. Use as a context manager or ``close()``."""

    def __init__(
        self,
        uri: str,
        auth: tuple[str, str],
        database: str = "neo4j",
        *,
        batch_size: int = 500,
        retry_s: float = 10.0,
        connect_timeout_s: float = 5.0,
    ) -> None:
        self.uri = uri
        self.database = database
        self.batch_size = batch_size
        self._auth = auth
        self._probe_driver: Driver | None = None
        self._probe_lock = threading.Lock()
        # Short retry and connect budgets: with the driver defaults a dead server took 72-100 s
        # to surface (transaction retries on top of connection acquisition).
        self._driver: Driver = GraphDatabase.driver(
            uri,
            auth=auth,
            notifications_min_severity="OFF",
            max_transaction_retry_time=retry_s,
            connection_timeout=connect_timeout_s,
            connection_acquisition_timeout=max(connect_timeout_s * 2, retry_s),
        )
        self._components: tuple[str, str] | None = None
        #: True after a statement found the server unavailable (until one succeeds again), so
        #: clean-up code (run records, lock release) does not spend another retry budget on a
        #: server that is known to be gone
        self.unavailable = False
        self._bookmarks = GraphDatabase.bookmark_manager()

    def forget_bookmarks(self) -> None:
        """Start a new causal chain. A restore (``neo4j-admin database load``) rewinds the
        database's transaction ids, so bookmarks taken before it name transactions the restored
        database never reaches and every later read would wait for them until it times out."""
        self._bookmarks = GraphDatabase.bookmark_manager()

    @classmethod
    def from_settings(cls, settings: Settings | None = None) -> "GraphClient":
        settings = settings or get_settings()
        uri, auth, database = resolve_connection(settings)
        return cls(
            uri,
            auth,
            database,
            batch_size=settings.ingest.write_batch_size,
            retry_s=settings.tuning.neo4j.retry_s,
            connect_timeout_s=settings.tuning.neo4j.connect_timeout_s,
        )

    # ----------------------------------------------------------- lifecycle
    def close(self) -> None:
        with self._probe_lock:
            if self._probe_driver is not None:
                self._probe_driver.close()
                self._probe_driver = None
        self._driver.close()

    def __enter__(self) -> "GraphClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def driver(self) -> Driver:
        return self._driver

    def verify(self) -> None:
        try:
            self._driver.verify_connectivity()
        except AuthError as exc:
            raise GraphError(f"Neo4j at {self.uri} rejected the credentials: {exc}") from exc
        except (ServiceUnavailable, OSError) as exc:
            raise GraphError(
                f"Neo4j at {self.uri} is not reachable: {exc}",
                hint="`kgp neo4j status` shows the local server; check NEO4J_URI otherwise",
            ) from exc

    def probe(self, timeout_s: float = 1.0) -> None:
        """Return when the database answers ``RETURN 1``, raise :class:`GraphError` when it does
        not, without the retries of a managed transaction: for health checks that must know
        within a second (a driver of its own, one connection, short timeouts, so a pool of busy
        or dead connections cannot hold it up)."""
        with self._probe_lock:
            if self._probe_driver is None:
                self._probe_driver = GraphDatabase.driver(
                    self.uri,
                    auth=self._auth,
                    notifications_min_severity="OFF",
                    max_connection_pool_size=1,
                    connection_timeout=timeout_s,
                    connection_acquisition_timeout=timeout_s,
                    max_transaction_retry_time=0,
                    liveness_check_timeout=0,
                )
            driver = self._probe_driver
        try:
            with driver.session(database=self.database) as session:
                session.run("RETURN 1").consume()
        except (Neo4jError, DriverError, OSError) as exc:
            with self._probe_lock:  # start afresh next time: no connection of a dead server
                if self._probe_driver is driver:
                    self._probe_driver = None
            driver.close()
            raise GraphError(
                f"Neo4j at {self.uri} did not answer a probe: {type(exc).__name__}: "
                f"{' '.join(str(exc).split())[:300]}",
                hint="is the server running? `kgp neo4j status`",
            ) from exc

    def components(self) -> tuple[str, str]:
        """(version, edition) from ``dbms.components()``, probed once."""
        if self._components is None:
            rec = self.read_raw(
                "CALL dbms.components() YIELD versions, edition "
                "RETURN versions[0] AS version, edition"
            )[0]
            self._components = (rec["version"], rec["edition"])
        return self._components

    # -------------------------------------------------------------- reads
    def read_raw(self, query: str, **params: Any) -> list[Record]:
        """Run a read statement in a managed read transaction (retried when transient)."""

        def work(tx: ManagedTransaction) -> list[Record]:
            return list(tx.run(query, params))

        rows: list[Record] = self._run(work, write=False)
        return rows

    def read(self, name: str, **params: Any) -> list[Record]:
        """Run the named read statement ``cypher/<name>.cypher``."""
        return self.read_raw(cypher(name), **params)

    def read_once(self, name: str, *, acquire_s: float = 1.0, **params: Any) -> list[Record]:
        """Run the named read statement once, without the transaction retries of
        :meth:`read` and waiting at most ``acquire_s`` for a pooled connection: for a server's
        hot path (its key table), which must fail at once on a database that is gone rather
        than retry for ``neo4j.retry_s``; the caller tries again on its next request."""
        query = cypher(name)

        def work(tx: ManagedTransaction) -> list[Record]:
            return list(tx.run(query, params))

        rows: list[Record] = self._run(
            work,
            write=False,
            max_transaction_retry_time=0,
            connection_acquisition_timeout=acquire_s,
        )
        return rows

    # ------------------------------------------------------------- writes
    def write_raw(self, query: str, **params: Any) -> list[Record]:
        def work(tx: ManagedTransaction) -> list[Record]:
            return list(tx.run(query, params))

        rows: list[Record] = self._run(work, write=True)
        return rows

    def write(self, name: str, **params: Any) -> list[Record]:
        return self.write_raw(cypher(name), **params)

    def write_batches(
        self,
        name: str,
        rows: Sequence[Any] | Iterable[Any],
        *,
        batch_size: int | None = None,
        **params: Any,
    ) -> int:
        """Run the named ``UNWIND $rows AS row ...`` statement over ``rows`` in batches."""
        query = cypher(name)
        total = 0
        for batch in _batches(rows, batch_size or self.batch_size):
            self.write_raw(query, rows=batch, **params)
            total += len(batch)
        return total

    def in_transaction(self, work: Any, *, write: bool = True) -> Any:
        """Run ``work(tx)`` in one managed transaction: all of it lands, or none of it."""
        return self._run(work, write=write)

    def _run(self, work: Any, *, write: bool, **config: Any) -> Any:
        try:
            with self._driver.session(
                database=self.database, bookmark_manager=self._bookmarks, **config
            ) as session:
                runner = session.execute_write if write else session.execute_read
                result = runner(work)
            self.unavailable = False
            return result
        except Neo4jError as exc:
            raise GraphError(f"Neo4j error {exc.code}: {exc.message}") from exc
        except ServiceUnavailable as exc:
            self.unavailable = True
            raise GraphError(
                f"Neo4j at {self.uri} is unavailable: {' '.join(str(exc).split())}",
                hint="is the server running? `kgp neo4j status`",
            ) from exc
