"""The late rerank's trained query head ships in the package, is the file its provenance
names, and reads a question's word pieces as documented; ``rerank.query_head`` decides where
it applies."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from kg_platform.config import Settings
from kg_platform.errors import ConfigError
from kg_platform.retrieval.rerank import query_head
from kg_platform.retrieval.rerank.query_head import SHIPPED_HEAD, file_sha256, head_for, load_head
from tests.support.contexts import known_scope_ctx

#: the head trained by `kgp lab rerank train-head` (seed 0) and measured on bench/longdoc; a
#: retrained or changed file must update this line, its provenance and the lab's record together
SHIPPED_SHA256 = "c10f019d40ab4de28cb8595797f142b7fa2edaf163811a54b91f8d0970a773e3"


def test_the_shipped_head_and_its_provenance_are_in_the_package() -> None:
    assert SHIPPED_HEAD.is_file() and SHIPPED_HEAD.stat().st_size < 30_000_000
    record = query_head.provenance()
    assert file_sha256(SHIPPED_HEAD) == record["sha256"] == SHIPPED_SHA256
    assert record["base_model"]["licence"] == "Apache-2.0"
    assert record["data"]["licence"].startswith("CC BY 4.0")
    assert record["training"]["seed"] == 0 and "train-head" in record["command"]


def test_the_head_maps_pieces_to_unit_vectors_and_weighs_them() -> None:
    rng = np.random.default_rng(0)
    tokens = rng.normal(size=(6, 384)).astype(np.float32)
    tokens /= np.linalg.norm(tokens, axis=1, keepdims=True)
    mapped, weights = load_head()(tokens)
    assert mapped.shape == (6, 384) and weights.shape == (6,)
    assert np.allclose(np.linalg.norm(mapped, axis=1), 1.0, atol=1e-5)
    assert np.isclose(weights.sum(), 1.0) and (weights > 0).all()
    assert not np.allclose(mapped, tokens, atol=1e-3)  # trained: not the identity


def test_a_changed_or_missing_head_is_refused_with_what_to_do(tmp_path) -> None:
    copy = tmp_path / "query-head.onnx"
    shutil.copy(SHIPPED_HEAD, copy)
    record = json.loads(SHIPPED_HEAD.with_suffix(".json").read_text())
    record["sha256"] = "0" * 64
    copy.with_suffix(".json").write_text(json.dumps(record))
    with pytest.raises(ConfigError, match="does not match its provenance"):
        load_head(copy)
    with pytest.raises(ConfigError, match="is missing"):
        load_head(tmp_path / "absent.onnx")


def _ctx(mode: str, *, sources: int, chunks: int, model: str = "all-MiniLM-L6-v2"):
    return known_scope_ctx(sources=sources, chunks=chunks, model=model, query_head=mode)


def test_auto_applies_the_head_over_long_documents_only() -> None:
    assert Settings().rerank.query_head == "auto"
    assert head_for(_ctx("auto", sources=2, chunks=60)) is load_head()  # papers
    assert head_for(_ctx("auto", sources=800, chunks=820)) is None  # short passages
    assert head_for(_ctx("on", sources=800, chunks=820)) is load_head()
    assert head_for(_ctx("off", sources=2, chunks=60)) is None
    # another embedder's word pieces are not what the head was trained on
    assert head_for(_ctx("on", sources=2, chunks=60, model="nomic-embed-text")) is None


def test_the_heads_states_are_read_from_its_provenance(tmp_path) -> None:
    """Which model copy a head was trained on comes from its provenance (``states``); a head
    whose record predates the field was trained on fp32 states, and a head without a record
    reads as fp32 here (loading it reports the missing file)."""
    from kg_platform.retrieval.rerank.query_head import head_states

    for states, expected in (({"states": "int8"}, "int8"), ({}, "none")):
        head = tmp_path / f"head-{expected}.onnx"
        head.write_bytes(b"onnx")
        head.with_suffix(".json").write_text(json.dumps({"sha256": "x", **states}))
        assert head_states(head) == expected
    assert head_states(tmp_path / "missing.onnx") == "none"
    assert head_states() == query_head.provenance().get("states", "none")
