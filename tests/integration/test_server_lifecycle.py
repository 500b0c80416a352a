"""Start, status, stop of a second ephemeral server (its own ports and home)."""

from __future__ import annotations

import pytest

from kg_platform.config import Settings
from kg_platform.neo4j_server import LocalNeo4j

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_start_status_stop(tmp_path):
    server = LocalNeo4j(
        Settings(neo4j={"heap": "512m", "pagecache": "64m"}), ephemeral=True, home=tmp_path / "home"
    )
    assert not server.status().running
    status = server.start()
    try:
        assert status.running and status.pid
        assert status.version.startswith("5.26.")
    finally:
        assert server.stop() is True
    assert not server.status().running
    assert server.stop() is False  # stopping twice is harmless
