"""The rerank's word-piece states kept on disk between processes: what comes back is what was
stored, bit for bit; the file stays within its size; a broken file never fails a retrieval; and
a rerank that reads the states from disk scores exactly as one that computed them."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from kg_platform.config import Settings
from kg_platform.retrieval.rerank import late_interaction
from kg_platform.retrieval.rerank.state_store import StateStore
from kg_platform.retrieval.rerank.text_cache import TextCache


def _state(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    vector = rng.standard_normal(8).astype(np.float32)
    tokens = rng.standard_normal((n, 8)).astype(np.float16)
    offsets = np.arange(2 * n, dtype=np.int64).reshape(n, 2)
    return vector, tokens, offsets


def test_stored_states_come_back_bit_for_bit_and_only_for_their_model(tmp_path):
    store = StateStore(tmp_path / "states.sqlite", max_mb=16)
    assert store.get_many("m", ["a"]) == {}  # no file yet: nothing, and no error
    states = {"a": _state(3, 1), "b b": _state(0, 2), "ü\n": _state(5, 3)}
    store.put_many("m", states)
    found = store.get_many("m", ["a", "b b", "ü\n", "missing", "a"])
    assert set(found) == set(states)
    for text, parts in states.items():
        for got, want in zip(found[text], parts, strict=True):
            assert got.dtype == want.dtype and got.shape == want.shape
            assert got.tobytes() == want.tobytes()
    assert found["b b"][1].shape == (0, 8)  # a text without word pieces keeps its width
    assert store.get_many("other model", ["a"]) == {}


def test_the_oldest_states_go_first_once_the_file_is_full(tmp_path):
    store = StateStore(tmp_path / "states.sqlite", max_mb=1)
    one = sum(len(np.asarray(p).tobytes()) for p in _state(100, 0))
    store.max_bytes = one * 5  # room for five
    for i in range(8):
        store.put_many("m", {f"t{i}": _state(100, i)})
    kept = store.get_many("m", [f"t{i}" for i in range(8)])
    assert 1 <= len(kept) <= 5 and "t7" in kept and "t0" not in kept


def test_a_broken_file_is_no_store_and_no_error(tmp_path):
    path = tmp_path / "states.sqlite"
    path.write_bytes(b"not a database" * 100)
    store = StateStore(path, max_mb=16)
    assert store.get_many("m", ["a"]) == {}
    store.put_many("m", {"a": _state(2, 0)})  # logged, not raised


def test_a_rerank_reading_states_from_disk_scores_as_one_that_computed_them(
    embedder, tmp_path, monkeypatch
):
    """Another process's states (the store) give the same scores, byte for byte, without
    reading the candidates through the model again; a copy that batches its reads (fp32) and
    ``state_cache_mb = 0`` use no store."""
    if getattr(embedder, "quantize", None) != "none":
        pytest.skip("the test embedder is not the fp32 ONNX model the int8 copy derives from")
    question = "Which treebank do they report results on?"
    texts = ["Results on the Penn Treebank, section 23.", "Dropout was 0.3 on every layer."]

    def ctx(**rerank):
        tuned = {"section_context": False, "quantize": "int8", **rerank}
        return SimpleNamespace(settings=Settings().with_tuning(rerank=tuned), embedder=embedder)

    reader = late_interaction.rerank_embedder(ctx())  # loaded before the cache dir moves
    assert late_interaction.state_store(ctx(state_cache_mb=0), reader) is None
    assert late_interaction.state_store(ctx(quantize="none"), embedder) is None
    monkeypatch.setenv("KGP_CACHE_DIR", str(tmp_path))
    reads: list[int] = []
    real = reader.embed_tokens

    def counted(batch):
        reads.append(len(batch))
        return real(batch)

    monkeypatch.setattr(reader, "embed_tokens", counted)

    def fresh_process() -> None:
        monkeypatch.setattr(late_interaction, "_STATES", TextCache(100))

    fresh_process()
    off = late_scores_bytes(question, texts, ctx(state_cache_mb=0))
    without = sum(reads)
    assert without >= len(texts) and not (tmp_path / "rerank-states.sqlite").exists()
    fresh_process()
    reads.clear()
    first = late_scores_bytes(question, texts, ctx())
    assert sum(reads) == without and (tmp_path / "rerank-states.sqlite").exists()
    fresh_process()
    reads.clear()
    second = late_scores_bytes(question, texts, ctx())
    assert reads == [1]  # the question alone: every candidate's states came from the store
    assert off == first == second


def late_scores_bytes(question, texts, ctx) -> list[bytes]:
    return [a.tobytes() for a in late_interaction.late_scores(question, texts, ctx)]
