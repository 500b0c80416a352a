"""Embeddings reach Neo4j as lists, and the driver's debug line no longer spells out their floats
(:mod:`kg_platform.graph.params`: the driver formats that line for every query, logged or not)."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from kg_platform.graph.params import vector_param


def test_a_vector_param_is_stored_as_the_same_list_of_floats(graph_session) -> None:
    vec = np.array([0.25, -1.5, 3.0625], dtype=np.float32)
    rows = [{"i": i, "v": vector_param(vec * (i + 1))} for i in range(3)]
    got = graph_session.read_raw(
        "UNWIND $rows AS r RETURN r.i AS i, r.v AS v, valueType(r.v) AS kind ORDER BY i",
        rows=rows,
    )
    assert [r["v"] for r in got] == [[0.25 * k, -1.5 * k, 3.0625 * k] for k in (1, 2, 3)]
    assert {r["kind"] for r in got} == {"LIST<FLOAT NOT NULL> NOT NULL"}


def test_the_drivers_run_line_names_the_vector_instead_of_its_floats(
    graph_session, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG, logger="neo4j"):
        graph_session.read_raw("RETURN size($v) AS n", v=vector_param([0.123456789] * 384))
    run_lines = [r.getMessage() for r in caplog.records if "C: RUN" in r.getMessage()]
    assert run_lines and "<vector of 384 floats>" in run_lines[-1]
    assert "0.123456789" not in run_lines[-1]
