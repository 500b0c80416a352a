"""Typed ingestion rows: immutable, picklable (the Ray engine ships plans), and turned into the
Cypher's parameter dicts by the writer alone."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from kg_platform.ingest.plan import SectionInput, Segment, SourceInput, plan_source
from kg_platform.ingest.rows import SourcePlan
from kg_platform.ingest.writer import _parameters
from kg_platform.segmenting.chunker import FixedChunker


def _plan() -> SourcePlan:
    sentences = [f"Sentence {i} is about the platypus and its eggs." for i in range(12)]
    inp = SourceInput(
        corpus="t-rows",
        uri="mem://rows",
        title="Rows",
        mime="text/markdown",
        sha256="0" * 64,
        bytes=1,
        sections=[
            SectionInput("Rows", 0, "Rows", None, [Segment("text", sentences[:6])]),
            SectionInput("Sub", 1, "Rows > Sub", 0, [Segment("text", sentences[6:])]),
        ],
    )
    return plan_source(inp, FixedChunker(32), budget=32, levels=3, min_piece_tokens=12)


def _embedded(plan: SourcePlan) -> SourcePlan:
    rows = [plan.source, *plan.sections, *plan.chunks, *plan.pieces]
    plan.vectors.update({row.id: [float(i), 1.0] for i, row in enumerate(rows)})
    return plan


def test_rows_are_frozen_and_a_plan_survives_pickling() -> None:
    plan = _embedded(_plan())
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.chunks[0].text = "changed"  # type: ignore[misc]
    copy = pickle.loads(pickle.dumps(plan))
    assert copy == plan and copy.embedded
    assert copy.part_of and copy.chunk_next and copy.piece_next  # the test covers every kind


def test_parameters_carry_properties_links_and_vectors() -> None:
    plan = _embedded(_plan())
    params = _parameters([plan])
    root, sub = params.sections
    assert sub["parent_id"] == root["id"] and root["parent_id"] == plan.source.id
    assert "parent_id" not in sub["props"]  # a link, not a stored property
    assert sub["props"]["path"] == "Rows > Sub" and sub["props"]["source_id"] == plan.source.id
    assert params.sources[0]["props"]["tokens"] == plan.tokens
    for row in params.pieces:
        assert isinstance(row["props"]["sentences"], list)  # a Cypher list, not a tuple
        assert row["embedding"] == plan.vectors[row["id"]] and row["terms"]
    levels = {row["level"] for row in params.chunks}
    assert levels == {c.level for c in plan.chunks} and max(levels) > 1
    assert {r["child"] for r in params.part_of} <= {c.id for c in plan.chunks}


def test_an_unembedded_plan_is_not_written() -> None:
    plan = _plan()
    assert not plan.embedded
    with pytest.raises(KeyError):
        _parameters([plan])
