"""Stop, status, start of a local server other than the session's: the suite's spare server
(its own ports and home; ``spare_neo4j``), so the test costs a restart, not a fresh server. A
fresh home's first start is what the session's own server does (``neo4j_server``)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_start_status_stop(spare_neo4j):
    server = spare_neo4j
    assert server.stop() is True
    assert not server.status().running
    assert server.stop() is False  # stopping twice is harmless
    status = server.start()
    assert status.running and status.pid
    assert status.version.startswith("5.26.")
    assert server.status().running
