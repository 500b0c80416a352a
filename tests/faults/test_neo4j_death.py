"""F8: a dead Neo4j surfaces as one line, after a bounded number of driver retries (it took 72-100 s
with the driver's defaults). Counted in retries, not seconds."""

from __future__ import annotations

import logging
import socket

import pytest

from kg_platform.errors import GraphError
from kg_platform.graph.client import GraphClient

pytestmark = pytest.mark.faults


def _dead_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # closed again on return: nothing listens there


def test_dead_server_is_one_line_after_few_retries(caplog):
    caplog.set_level(logging.WARNING, logger="neo4j")
    with GraphClient(
        f"bolt://127.0.0.1:{_dead_port()}", ("neo4j", "x"), retry_s=3.0, connect_timeout_s=1.0
    ) as client:
        with pytest.raises(GraphError) as info:
            client.read_raw("RETURN 1")
    message = info.value.args[0]  # the reason; the hint follows on its own line
    assert "unavailable" in message and "\n" not in message
    retries = [r for r in caplog.records if "will be retried" in r.getMessage()]
    # exponential back-off 1, 2, 4 ... s inside a 3 s budget: a handful, not the ~7 of 30 s
    assert 1 <= len(retries) <= 4, len(retries)


def test_settings_carry_the_short_budgets():
    from kg_platform.config import Settings

    s = Settings()
    assert s.tuning.neo4j.retry_s <= 15 and s.tuning.neo4j.connect_timeout_s <= 10
