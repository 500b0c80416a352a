"""F7: the Neo4j password never appears on a command line, and the server's home (store, auth
file, password) is private to this user."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

pytestmark = [pytest.mark.faults, pytest.mark.integration]


def test_initial_password_is_passed_through_a_private_file(tmp_path, monkeypatch):
    from kg_platform.config import Settings
    from kg_platform.neo4j_server import LocalNeo4j
    from kg_platform.neo4j_server import manager

    server = LocalNeo4j(Settings(), home=tmp_path / "home", ephemeral=True)
    server.ensure_jars()
    server._write_conf()
    seen: list[list[str]] = []
    modes: list[int] = []
    real_run = subprocess.run

    def run(argv, *args, **kwargs):
        seen.append([str(a) for a in argv])
        for a in argv:
            if str(a).startswith("@"):
                modes.append(stat.S_IMODE(os.stat(str(a)[1:]).st_mode))
        return real_run(argv, *args, **kwargs)

    monkeypatch.setattr(manager.subprocess, "run", run)
    server._set_initial_password(server._java())
    password = server.password()
    assert seen and all(password not in " ".join(argv) for argv in seen)
    assert modes == [0o600]
    assert (server.home / "data" / "dbms" / "auth.ini").exists()
    assert not list((server.home / "run").glob("*.args"))  # the argument file is gone
    assert stat.S_IMODE(os.stat(server.home).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(server.password_file).st_mode) == 0o600


def test_running_server_home_is_private_and_no_process_shows_the_password(neo4j_server):
    if neo4j_server.get("home") is None:
        pytest.skip("KGP_TEST_NEO4J_URI points at an external server")
    home, password = Path(neo4j_server["home"]), neo4j_server["password"]
    assert stat.S_IMODE(os.stat(home).st_mode) == 0o700
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            assert password not in cmdline, f"pid {proc.name} shows the password"
    store_files = [p for p in (home / "data").rglob("*") if p.is_file()]
    assert store_files
    loose = [p for p in store_files if stat.S_IMODE(p.stat().st_mode) & 0o077]
    assert loose == [], loose[:5]  # new store files are created with umask 077
