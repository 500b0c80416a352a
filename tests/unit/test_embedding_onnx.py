"""The ONNX Runtime embedder gives the torch sentence-transformers model's vectors.

The graph is built from the same safetensors weights without torch, so an fp32 vector must agree
with the torch one to float rounding (we require 1e-3 cosine, the contract a graph embedded by
either provider relies on). int8 is allowed to drift, but not far.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from kg_platform.embedding.onnx import OnnxEmbedder, split_batches
from kg_platform.embedding.onnx_export import data_path
from tests.support.data import BENCH


def _bench_texts(limit: int = 160) -> list[str]:
    """Questions and paragraphs of the dev QA sets plus paragraphs of the Markdown documents."""
    texts: list[str] = []
    for name in ("hotpotqa.jsonl", "2wikimultihopqa.jsonl"):
        path = BENCH / "dev" / name
        if not path.exists():
            continue
        for line in path.read_text(encoding="utf-8").splitlines()[:8]:
            q = json.loads(line)
            texts.append(q["question"])
            texts.extend(" ".join(p["sentences"]) for p in q["paragraphs"][:6])
    for md in sorted((BENCH / "documents" / "md").glob("*.md"))[:3]:
        texts.extend(
            p.strip() for p in md.read_text(encoding="utf-8").split("\n\n")[:20] if p.strip()
        )
    if not texts:
        pytest.skip(f"needs the shared bench data, not at {BENCH} (set KGP_SHARED_DIR)")
    # Edge cases: empty, whitespace only, one character, far beyond the 256 word-piece limit.
    return texts[:limit] + ["", "   ", "a", "token " * 600]


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return _bench_texts()


@pytest.fixture(scope="module")
def torch_vectors(texts: list[str]) -> np.ndarray:
    pytest.importorskip("sentence_transformers", reason="needs the train extra (torch)")
    from kg_platform.embedding.local import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder("all-MiniLM-L6-v2", batch_size=16).embed(texts)


def test_fp32_matches_torch_within_1e_3_cosine(texts, torch_vectors, tmp_path_factory) -> None:
    onnx = OnnxEmbedder(
        "all-MiniLM-L6-v2", cache_dir=tmp_path_factory.mktemp("cache"), batch_size=16
    )
    vectors = onnx.embed(texts)
    assert vectors.shape == torch_vectors.shape == (len(texts), 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    cosine = (vectors * torch_vectors).sum(axis=1)
    worst = int(np.argmin(cosine))
    assert cosine.min() >= 1 - 1e-3, f"text {worst} ({texts[worst][:60]!r}): cosine {cosine[worst]}"
    assert (
        onnx.model_name == "all-MiniLM-L6-v2" and onnx.dimension == 384 and onnx.max_tokens == 256
    )


def test_order_and_batching_do_not_change_vectors(texts, tmp_path_factory) -> None:
    onnx = OnnxEmbedder(
        "all-MiniLM-L6-v2", cache_dir=tmp_path_factory.mktemp("cache"), batch_size=7
    )
    together = onnx.embed(texts[:30])
    alone = np.vstack([onnx.embed([t]) for t in reversed(texts[:30])])[::-1]
    np.testing.assert_allclose(together, alone, atol=1e-5)
    assert onnx.embed([]).shape == (0, 384)


def test_a_model_call_holds_at_most_batch_tokens_padded_pieces(texts, tmp_path_factory) -> None:
    """Long texts go fewer to a call (the speed of ``embedding.batch_tokens``), a text longer
    than the budget still goes alone, and neither the vectors nor the word-piece states change."""
    cache = tmp_path_factory.mktemp("cache")
    wide = OnnxEmbedder("all-MiniLM-L6-v2", cache_dir=cache, batch_size=64, batch_tokens=10**9)
    narrow = OnnxEmbedder("all-MiniLM-L6-v2", cache_dir=cache, batch_size=64, batch_tokens=300)
    shapes: list[tuple[int, int]] = []
    run = narrow._session.run

    def recording_run(outputs, feeds):  # type: ignore[no-untyped-def]
        shapes.append(feeds["input_ids"].shape)
        return run(outputs, feeds)

    narrow._session = type("Recorded", (), {"run": staticmethod(recording_run)})()
    np.testing.assert_allclose(narrow.embed(texts), wide.embed(texts), atol=1e-5)
    assert sum(n for n, _ in shapes) == len(texts)
    assert all(n * width <= 300 or n == 1 for n, width in shapes), shapes
    assert any(n > 1 for n, _ in shapes) and any(width == 256 for _, width in shapes)
    shapes.clear()
    for a, b in zip(narrow.embed_tokens(texts[:40]), wide.embed_tokens(texts[:40]), strict=True):
        np.testing.assert_array_equal(a.offsets, b.offsets)
        np.testing.assert_allclose(a.tokens, b.tokens, atol=1e-4)
    assert shapes and all(n * width <= 300 or n == 1 for n, width in shapes)


def test_int8_stays_close_to_torch(texts, torch_vectors, tmp_path_factory) -> None:
    cache = tmp_path_factory.mktemp("cache")
    int8 = OnnxEmbedder("all-MiniLM-L6-v2", cache_dir=cache, quantize="int8")
    assert int8.onnx_file.name.endswith("-int8.onnx")
    # The MatMul weights shrink 4x; the word-embedding table (half the model) stays float.
    fp32_data = data_path(next(cache.glob("onnx/*-fp32.onnx")))
    assert data_path(int8.onnx_file).stat().st_size < 0.7 * fp32_data.stat().st_size
    cosine = (int8.embed(texts) * torch_vectors).sum(axis=1)
    assert cosine.mean() > 0.98 and cosine.min() > 0.9, (cosine.mean(), cosine.min())


def test_onnx_file_is_built_once_and_reused(tmp_path) -> None:
    first = OnnxEmbedder("all-MiniLM-L6-v2", cache_dir=tmp_path)
    inode = first.onnx_file.stat().st_ino  # a rebuild replaces the file: a new inode
    second = OnnxEmbedder("all-MiniLM-L6-v2", cache_dir=tmp_path)
    assert second.onnx_file == first.onnx_file and second.onnx_file.stat().st_ino == inode
    assert not list((tmp_path / "onnx").glob("*.tmp"))


def _outputs(model, texts: list[str]) -> bytes:  # type: ignore[no-untyped-def]
    """Every output of every text, as bytes: equal bytes, equal model."""
    parts = [model.embed(texts).tobytes()]
    for st in model.embed_tokens(texts):
        parts += [st.vector.tobytes(), st.tokens.tobytes(), st.offsets.tobytes()]
    return b"".join(parts)


@pytest.mark.parametrize("quantize", ["none", "int8"])
def test_weights_are_mapped_from_a_data_file_with_the_same_outputs(tmp_path, quantize) -> None:
    """A cached model keeps its weights in ``<model>.onnx.data`` (mapped, not read and copied:
    a command loading it touches a fraction of the pages), and a model cached inline by an earlier
    version is moved to that layout on first use, and its outputs are the inline file's, bit
    for bit."""
    import shutil

    import onnx

    texts = ["What file formats can MarkItDown convert?", "Big Blue " * 40, "token " * 600]
    cache = tmp_path / "cache"
    mapped = OnnxEmbedder("all-MiniLM-L6-v2", cache_dir=cache, quantize=quantize)
    model = mapped.onnx_file
    data = data_path(model)
    assert data.exists() and model.stat().st_size < 0.01 * data.stat().st_size
    # the same graph with its weights inline, as an earlier version cached it
    inline = tmp_path / "inline" / "onnx"
    inline.mkdir(parents=True)
    shutil.copy(cache / "onnx" / "digests.json", inline)
    onnx.save_model(onnx.load(str(model)), str(inline / model.name))
    assert not data_path(inline / model.name).exists()
    session = OnnxEmbedder("all-MiniLM-L6-v2", cache_dir=inline.parent, quantize=quantize)
    assert data_path(session.onnx_file).exists(), "moved to the mapped layout on first use"
    again = OnnxEmbedder("all-MiniLM-L6-v2", cache_dir=inline.parent, quantize=quantize)
    assert _outputs(mapped, texts) == _outputs(session, texts) == _outputs(again, texts)
    # and against a session on the inline bytes themselves
    import onnxruntime as ort

    inline_copy = tmp_path / "inline-copy.onnx"
    onnx.save_model(onnx.load(str(model)), str(inline_copy))
    plain = ort.InferenceSession(str(inline_copy), providers=["CPUExecutionProvider"])
    feeds = {"input_ids": np.array([[101, 2054, 2003, 102]]), "attention_mask": np.ones((1, 4))}
    feeds["attention_mask"] = feeds["attention_mask"].astype(np.int64)
    ours = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    for a, b in zip(plain.run(None, feeds), ours.run(None, feeds), strict=True):
        assert a.tobytes() == b.tobytes()


def test_externalise_is_done_once_and_redone_after_a_move_cut_short(tmp_path) -> None:
    from kg_platform.embedding.onnx_export import externalise

    import onnx

    built = OnnxEmbedder("all-MiniLM-L6-v2", cache_dir=tmp_path / "cache").onnx_file
    assert externalise(built) is False  # already mapped
    inline = tmp_path / "m.onnx"
    onnx.save_model(onnx.load(str(built)), str(inline))
    data_path(inline).write_bytes(b"left by a move that died before the graph was replaced")
    assert externalise(inline) is True
    assert data_path(inline).stat().st_size > 1_000_000 and externalise(inline) is False
    assert not list(tmp_path.glob("*.tmp"))


def test_same_weights_in_another_folder_share_one_cached_model(tmp_path) -> None:
    """A second virtualenv or clone holds the same bundled weights at another path with another
    mtime: it must reuse the cached model, not build a 90 MB copy of its own."""
    import os
    import shutil
    import time

    from kg_platform.embedding.local import resolve_model_path
    from kg_platform.embedding.onnx_export import cached_onnx_path

    bundled = resolve_model_path("all-MiniLM-L6-v2")
    copy = tmp_path / "venv2" / bundled.name
    shutil.copytree(bundled, copy)
    cache = tmp_path / "cache"
    first = cached_onnx_path(bundled, cache, "fp32")
    os.utime(first, (0, 0))
    assert cached_onnx_path(copy, cache, "fp32") == first
    assert first.stat().st_mtime > time.time() - 60, "a use marks the model as used (pruning)"
    assert len(list((cache / "onnx").glob("*.onnx"))) == 1
    # other weights (here: one byte changed) get a model of their own
    weights = copy / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1
    weights.write_bytes(bytes(data))
    assert cached_onnx_path(copy, cache, "fp32") != first


def test_weights_digest_is_remembered_until_the_file_changes(tmp_path) -> None:
    import hashlib
    import os

    from kg_platform.embedding.onnx_export import weights_digest

    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"weights v1")
    onnx_dir = tmp_path / "onnx"
    assert weights_digest(weights, onnx_dir) == hashlib.sha256(b"weights v1").hexdigest()
    # the sidecar answers while path, size and mtime hold (proved by planting another digest)
    sidecar = onnx_dir / "digests.json"
    known = json.loads(sidecar.read_text())
    ((identity, _),) = known.items()
    sidecar.write_text(json.dumps({identity: "planted"}))
    assert weights_digest(weights, onnx_dir) == "planted"
    # new content with a new mtime is hashed again
    weights.write_bytes(b"weights v2")
    os.utime(weights, ns=(1, 1))
    assert weights_digest(weights, onnx_dir) == hashlib.sha256(b"weights v2").hexdigest()


def test_models_unused_for_a_month_are_pruned_and_used_ones_kept(tmp_path) -> None:
    import os
    import time

    from kg_platform.embedding.onnx_export import UNUSED_DAYS, prune_unused

    old, recent = tmp_path / "old-fp32.onnx", tmp_path / "recent-fp32.onnx"
    old.write_bytes(b"x")
    recent.write_bytes(b"y")
    long_ago = time.time() - (UNUSED_DAYS + 1) * 86400
    os.utime(old, (long_ago, long_ago))
    data_path(old).write_bytes(b"weights")
    assert prune_unused(tmp_path) == [old]
    assert recent.exists() and not old.exists() and not data_path(old).exists()


def test_default_provider_is_onnx() -> None:
    from kg_platform.config import EmbeddingSettings
    from kg_platform.embedding import get_embedder

    settings = EmbeddingSettings()
    assert settings.provider == "onnx"
    assert isinstance(get_embedder(settings), OnnxEmbedder)


def test_non_bert_folder_is_refused_with_a_hint(tmp_path) -> None:
    from kg_platform.errors import EmbeddingError

    (tmp_path / "config.json").write_text(json.dumps({"model_type": "t5"}))
    (tmp_path / "model.safetensors").write_bytes(b"")
    with pytest.raises(EmbeddingError, match="BERT encoders only"):
        OnnxEmbedder(str(tmp_path), cache_dir=tmp_path / "cache")


def test_entity_names_get_the_int8_copy_of_the_configured_model_and_nothing_else_is_swapped():
    from kg_platform.config import EmbeddingSettings
    from kg_platform.embedding import get_embedder
    from kg_platform.embedding.base import quantized_embedder

    settings = EmbeddingSettings()
    fp32 = get_embedder(settings)
    names = quantized_embedder(fp32, settings, "int8")
    assert names is not fp32 and getattr(names, "quantize", None) == "int8"
    assert names.model_name == fp32.model_name and names.dimension == fp32.dimension
    assert quantized_embedder(fp32, settings, "none") is fp32

    class Own:  # a caller's own embedder (a test's, a remote one) embeds names itself
        model_name, dimension, max_tokens = "own", 3, 8

    own = Own()
    assert quantized_embedder(own, settings, "int8") is own  # type: ignore[arg-type]


def _greedy_calls(lengths: list[int], batch_size: int, batch_tokens: int) -> list[tuple[int, int]]:
    """Calls filled to ``batch_tokens`` in turn (how texts were split before ``split_batches``)."""
    calls, start = [], 0
    while start < len(lengths):
        rows = max(1, min(batch_size, batch_tokens // lengths[start]))
        calls.append((start, min(len(lengths), start + rows)))
        start += rows
    return calls


def _padded(lengths: list[int], calls: list[tuple[int, int]]) -> int:
    return sum((end - start) * lengths[start] for start, end in calls)


def test_split_batches_covers_every_text_in_order_within_both_limits() -> None:
    lengths = sorted([256, 256, 300, 7, 12, 130, 129, 64, 63, 62, 200, 5, 5, 5, 5, 5], reverse=True)
    calls = split_batches(lengths, batch_size=4, batch_tokens=512)
    assert calls[0][0] == 0 and calls[-1][1] == len(lengths)
    assert all(a[1] == b[0] for a, b in zip(calls, calls[1:]))  # contiguous, nothing twice
    for start, end in calls:
        assert 1 <= end - start <= 4
        assert (end - start) * lengths[start] <= 512 or end - start == 1
    assert split_batches([], 64, 1024) == []
    assert split_batches([5000], 64, 1024) == [(0, 1)]  # over the budget: alone, never dropped


def test_split_batches_pads_less_than_filling_each_call() -> None:
    """The rerank's 30 candidates (their word-piece counts, longest first, in a real `kgp
    retrieve` over papers): filling calls to 1,024 padded 12% over the real pieces."""
    lengths = [256, 256, 256, 196, 226, 220, 218, 195, 206, 204, 203, 201, 187, 186, 185, 184]
    lengths += [181, 167, 160, 156, 153, 148, 146, 137, 131, 110, 90, 72, 58, 40]
    lengths.sort(reverse=True)
    greedy = _greedy_calls(lengths, 64, 1024)
    split = split_batches(lengths, 64, 1024, call_cost=32)
    assert _padded(lengths, split) + 32 * len(split) <= _padded(lengths, greedy) + 32 * len(greedy)
    assert _padded(lengths, split) < 0.97 * _padded(lengths, greedy)
    # with nothing charged per call, every text alone pads nothing, which is what the split finds
    assert _padded(lengths, split_batches(lengths, 64, 1024, call_cost=0)) == sum(lengths)


def test_int8_word_piece_states_do_not_depend_on_the_texts_read_beside_them(embedder) -> None:
    """Dynamic quantisation scales a call's activations by the whole call, so the int8 copy
    reads each text's states in a call of its own: a text's states are the same alone and in a
    list (the late rerank caches them, and must not rank a question by what was read before)."""
    from kg_platform.config import EmbeddingSettings
    from kg_platform.embedding.base import quantized_embedder

    settings = EmbeddingSettings()
    int8 = quantized_embedder(embedder, settings, "int8")
    if getattr(int8, "quantize", None) != "int8":
        pytest.skip("the test embedder is not the fp32 ONNX model the int8 copy derives from")
    target = "The treebank holds forty thousand parsed sentences from the Wall Street Journal."
    others = ["A short one.", "Gradients were clipped at a norm of five " * 12]
    alone = int8.embed_tokens([target])[0]
    beside = int8.embed_tokens([others[0], target, others[1]])[1]
    np.testing.assert_array_equal(alone.tokens, beside.tokens)
    np.testing.assert_array_equal(alone.offsets, beside.offsets)
    # read together in one call, the same text's int8 states move (why the rule exists)
    encodings = int8._tokenizer.encode_batch([others[1], target])
    width = max(len(e.ids) for e in encodings)
    ids = np.zeros((2, width), dtype=np.int64)
    mask = np.zeros((2, width), dtype=np.int64)
    for row, enc in enumerate(encodings):
        ids[row, : len(enc.ids)], mask[row, : len(enc.ids)] = enc.ids, 1
    (batched,) = int8._session.run(["token_embeddings"], {"input_ids": ids, "attention_mask": mask})
    n = len(alone.tokens)
    assert not np.allclose(batched[1, 1 : n + 1], alone.tokens, atol=1e-6)


def test_the_int8_copy_runs_calls_side_by_side_with_the_same_results(tmp_path_factory) -> None:
    """The int8 copy's calls are small (one rerank candidate, a batch of names), so they run on
    one thread each, side by side: what comes back is what the calls give one after another."""
    cache = tmp_path_factory.mktemp("cache")
    side = OnnxEmbedder("all-MiniLM-L6-v2", cache_dir=cache, quantize="int8", threads=2)
    alone = OnnxEmbedder("all-MiniLM-L6-v2", cache_dir=cache, quantize="int8", threads=1)
    assert side._parallel_calls == 2 and alone._parallel_calls == 1
    fp32 = OnnxEmbedder("all-MiniLM-L6-v2", cache_dir=cache, threads=2)
    assert fp32._parallel_calls == 1  # large calls: one at a time, on every core
    texts = [f"Paragraph {i} says the corpus holds {i * 7} annotated sentences." for i in range(9)]
    texts.append("A much longer candidate about gradient clipping and warm-up schedules " * 6)
    for a, b in zip(side.embed_tokens(texts), alone.embed_tokens(texts), strict=True):
        np.testing.assert_allclose(a.tokens, b.tokens, atol=1e-6)
        np.testing.assert_allclose(a.vector, b.vector, atol=1e-6)
        np.testing.assert_array_equal(a.offsets, b.offsets)
    names = [f"Entity number {i}" for i in range(300)]
    side.batch_size = alone.batch_size = 16  # several calls
    np.testing.assert_allclose(side.embed(names), alone.embed(names), atol=1e-6)
