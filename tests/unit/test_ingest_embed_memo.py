"""Ingestion embeds each distinct text once, and not again when SAGE already embedded it."""

from __future__ import annotations

import numpy as np
import pytest

from kg_platform.embedding.memo import SentenceMemo, embedder_key, sentence_memo
from kg_platform.ingest.embed import embed_plans
from kg_platform.ingest.rows import ChunkRow, PieceRow, SectionRow, SourcePlan, SourceRow
from kg_platform.segmenting.sage import BoundaryModel, SemanticSegmenter


class CountingEmbedder:
    """Deterministic vectors from the text's bytes; remembers every text it was asked for."""

    model_name, dimension, max_tokens, quantize = "counting-test", 8, 256, "none"

    def __init__(self) -> None:
        self.seen: list[str] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.seen.extend(texts)
        rows = [
            np.frombuffer((t + "#" * 8).encode()[:8], dtype=np.uint8).astype(np.float32) + 1
            for t in texts
        ]
        m = np.asarray(rows, dtype=np.float32).reshape(len(texts), 8)
        return m / np.linalg.norm(m, axis=1, keepdims=True)


def _chunk(cid: str, level: int, text: str) -> ChunkRow:
    return ChunkRow(cid, "c", "s", "sec", level, 0, text, 4, "text", "fixed", None, None)


def _piece(pid: str, chunk_id: str, text: str, tokens: int) -> PieceRow:
    return PieceRow(pid, "c", "s", chunk_id, text, tokens, 0, (0,))


def _plan() -> SourcePlan:
    s1, s2 = "Alpha sentence one.", "Beta sentence two."
    return SourcePlan(
        source=SourceRow("s", "c", "u", "Doc", "text/plain", "0" * 64, 1, None, "fixed", "", 10),
        sections=[SectionRow("sec", "s", "c", "s", "Doc", 1, 0, None, "Doc")],
        chunks=[_chunk("c1", 1, s1), _chunk("c2", 1, f"{s1} {s2}"), _chunk("c3", 2, "ignored")],
        part_of=[],
        chunk_next=[],
        piece_next=[],
        tokens=10,
        pieces=[_piece("p1", "c1", s1, 4), _piece("p2", "c2", s1, 4), _piece("p3", "c2", s2, 6)],
        children={"c3": ["c1", "c2"]},
    )


def _vector(plan: SourcePlan, row: ChunkRow | PieceRow) -> list[float]:
    return plan.vectors[row.id]


def test_identical_texts_are_embedded_once() -> None:
    sentence_memo().clear()
    embedder = CountingEmbedder()
    plan = _plan()
    assert embed_plans([plan], embedder) == 4  # "Doc" (title = path), s1, s1+s2, s2
    assert sorted(embedder.seen) == sorted(set(embedder.seen))
    assert _vector(plan, plan.chunks[0]) == _vector(plan, plan.pieces[0])
    mean = np.mean([_vector(plan, plan.chunks[0]), _vector(plan, plan.chunks[1])], axis=0)
    assert np.allclose(_vector(plan, plan.chunks[2]), mean / np.linalg.norm(mean), atol=1e-6)


def test_level1_vectors_from_pieces_skip_the_chunk_text() -> None:
    """``level1_vectors=pieces``: the model never reads a level-1 chunk's text; its vector is
    the token-weighted normalised mean of its pieces' vectors (one piece: that piece's vector)."""
    sentence_memo().clear()
    embedder = CountingEmbedder()
    plan = _plan()
    assert embed_plans([plan], embedder, level1="pieces") == 3  # "Doc", s1, s2 -- not s1+s2
    assert "Alpha sentence one. Beta sentence two." not in embedder.seen
    assert _vector(plan, plan.chunks[0]) == _vector(plan, plan.pieces[0])
    p1, p2 = np.asarray(_vector(plan, plan.pieces[1])), np.asarray(_vector(plan, plan.pieces[2]))
    weighted = 4 * p1 + 6 * p2
    assert np.allclose(
        _vector(plan, plan.chunks[1]), weighted / np.linalg.norm(weighted), atol=1e-6
    )
    assert not np.allclose(_vector(plan, plan.chunks[1]), _vector(plan, plan.pieces[1]), atol=1e-3)
    assert np.isclose(np.linalg.norm(_vector(plan, plan.chunks[1])), 1.0, atol=1e-6)


def test_level1_chunk_without_pieces_falls_back_to_the_model() -> None:
    sentence_memo().clear()
    embedder = CountingEmbedder()
    plan = _plan()
    plan.pieces = [p for p in plan.pieces if p.chunk_id != "c2"]
    embed_plans([plan], embedder, level1="pieces")
    assert "Alpha sentence one. Beta sentence two." in embedder.seen
    assert len(_vector(plan, plan.chunks[1])) == 8


def test_sentences_sage_embedded_are_not_embedded_again() -> None:
    pytest.importorskip("torch", reason="builds an untrained head (train extra)")
    sentence_memo().clear()
    embedder = CountingEmbedder()
    head = BoundaryModel.new(8, hidden=4)
    segmenter = SemanticSegmenter(
        head, embedder.embed, threshold=0.5, coarse_tokens=400, count_tokens=lambda s: [3] * len(s)
    )
    segmenter.split(["Alpha sentence one.", "Beta sentence two."])
    embedder.seen.clear()
    plan = _plan()
    fresh = CountingEmbedder()
    assert embed_plans([plan], embedder) == 2  # only "Doc" and the two-sentence chunk
    assert set(embedder.seen) == {"Doc", "Alpha sentence one. Beta sentence two."}
    assert np.allclose(_vector(plan, plan.pieces[2]), fresh.embed(["Beta sentence two."])[0])


def test_memo_is_bounded_and_keyed_by_embedder() -> None:
    memo = SentenceMemo(max_items=2)
    a, b = CountingEmbedder(), CountingEmbedder()
    b.model_name = "another-model"
    memo.put(embedder_key(a), ["x", "y", "z"], np.eye(3, dtype=np.float32))
    assert set(memo.take(embedder_key(a), ["x", "y", "z"])) == {"y", "z"}
    assert memo.take(embedder_key(b), ["y", "z"]) == {}
