"""``kgp neo4j dump PATH`` / ``kgp neo4j load PATH``: an offline copy of the local database.

Why stop the server: on Community edition ``neo4j-admin database dump/load`` needs the database
offline and ``STOP DATABASE`` is Enterprise-only, so the local server is stopped, the admin tool
runs, and the server is started again if it was running. Queries in flight fail during that
window (a few seconds plus the restart); schedule backups between jobs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from kg_platform.errors import Neo4jServerError
from kg_platform.neo4j_server.manager import ADMIN_ENTRY_POINT, LocalNeo4j

__all__ = ["dump_database", "load_database"]


def _admin(server: LocalNeo4j, *args: str) -> None:
    env = {**os.environ, "NEO4J_HOME": str(server.home), "NEO4J_CONF": str(server.home / "conf")}
    proc = subprocess.run(
        [server._java(), "-cp", f"{server.lib_dir}/*", ADMIN_ENTRY_POINT, "database", *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        umask=0o077,
    )
    if proc.returncode != 0:
        tail = " ".join((proc.stderr or proc.stdout).split())[-600:]
        raise Neo4jServerError(
            f"neo4j-admin database {args[0]} failed: {tail}",
            hint="see `kgp neo4j logs`; the server was restarted if it ran",
        )


def _offline(server: LocalNeo4j, action) -> None:  # a zero-argument callable
    was_running = server.status().running
    if was_running:
        server.stop()
    try:
        server.ensure_jars()
        server._write_conf()
        action()
    finally:
        if was_running:
            server.start()


def dump_database(server: LocalNeo4j, path: Path, database: str = "neo4j") -> Path:
    """Write ``database`` to the file ``path`` (0600); stops and restarts a running server."""
    path = Path(path).expanduser().resolve()
    if path.is_dir():
        raise Neo4jServerError(f"{path} is a folder", hint="give a file name, e.g. kg.dump")
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".kgp-dump-", dir=path.parent))
    try:
        _offline(
            server,
            lambda: _admin(
                server, "dump", database, f"--to-path={staging}", "--overwrite-destination=true"
            ),
        )
        produced = staging / f"{database}.dump"
        if not produced.exists():
            raise Neo4jServerError(
                f"neo4j-admin wrote no {produced.name}", hint="see `kgp neo4j logs`"
            )
        os.chmod(produced, 0o600)
        produced.replace(path)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return path


def load_database(server: LocalNeo4j, path: Path, database: str = "neo4j") -> None:
    """Replace ``database`` with the dump file ``path``; stops and restarts a running server."""
    path = Path(path).expanduser().resolve()
    if not path.is_file():
        raise Neo4jServerError(
            f"no dump file at {path}", hint="pass the file `kgp neo4j dump` wrote"
        )
    staging = Path(tempfile.mkdtemp(prefix=".kgp-load-"))
    try:
        shutil.copyfile(path, staging / f"{database}.dump")
        _offline(
            server,
            lambda: _admin(
                server, "load", database, f"--from-path={staging}", "--overwrite-destination=true"
            ),
        )
    finally:
        shutil.rmtree(staging, ignore_errors=True)
