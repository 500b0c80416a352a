"""Vectors for a batch of planned sources, with the model called once per batch.

What goes through the model, and why nothing goes through it twice:

* **pieces** always (they are the finest units; MoGG seeds and propagation read them): by the
  model on each piece's text, or with ``ingest.piece_vectors = "late"`` pooled from the token
  states of their level-1 chunk's single model pass (:class:`LatePass`, late chunking);
* **level-1 chunks** with ``ingest.level1_vectors = "model"`` (the default). With ``"pieces"``
  a level-1 chunk's vector is the token-weighted, normalised mean of its pieces' vectors: the
  pieces tile the chunk exactly, so the model reads each text once instead of about twice. It is
  not the default because a mean of sentence vectors loses what the model reads across
  sentences, and retrieval over level-1 chunks finds less of the evidence. A chunk that is one piece gets that piece's
  vector in both modes (the identical text is embedded once);
* **levels >= 2**: the normalised mean of the children's vectors (``embed_higher_levels =
  "mean"``: no model time, no truncation at the model's 256 word pieces), or the model
  on their text (``"direct"``);
* sections by their title path and sources by their title.

Identical texts (a QA paragraph's title is also its section path; a chunk that is one piece) are
embedded once, and a text the SAGE segmenter already embedded (a piece that is one sentence) is
taken from the sentence memo instead of the model.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import numpy as np

from kg_platform.embedding.base import Embedder, has_token_states
from kg_platform.embedding.memo import embedder_key, sentence_memo
from kg_platform.ingest.rows import ChunkRow, PieceRow, SourcePlan

__all__ = [
    "LatePass",
    "embed_plans",
    "embed_with_settings",
    "late_chunks",
    "pieces_by_chunk",
    "texts_to_embed",
]


def pieces_by_chunk(plan: SourcePlan) -> dict[str, list[PieceRow]]:
    """The pieces of each level-1 chunk, in document order."""
    out: dict[str, list[PieceRow]] = {}
    for piece in plan.pieces:
        out.setdefault(piece.chunk_id, []).append(piece)
    return out


def _chunk_needs_model(chunk: ChunkRow, has_pieces: bool, higher: str, level1: str) -> bool:
    if chunk.level == 1:
        # a level-1 chunk without pieces (none today, but a future piecer might skip one)
        # falls back to the model rather than getting no vector
        return level1 == "model" or not has_pieces
    return higher == "direct"


def texts_to_embed(
    plans: Sequence[SourcePlan],
    higher: str,
    level1: str = "model",
    skip_chunks: Collection[str] = (),
    skip_pieces: Collection[str] = (),
) -> list[str]:
    """The distinct texts the model sees for these plans (also the benchmark's ceiling input),
    leaving out the chunks and pieces (by id) a late pass covers."""
    seen: dict[str, None] = {}
    for plan in plans:
        seen.setdefault(plan.source.embedding_text, None)
        for sec in plan.sections:
            seen.setdefault(sec.embedding_text, None)
        owned = pieces_by_chunk(plan)
        for chunk in plan.chunks:
            if chunk.id in skip_chunks:
                continue
            if _chunk_needs_model(chunk, chunk.id in owned, higher, level1):
                seen.setdefault(chunk.text, None)
        for piece in plan.pieces:
            if piece.id not in skip_pieces:
                seen.setdefault(piece.text, None)
    return list(seen)


def late_chunks(plans: Sequence[SourcePlan]) -> list[tuple[ChunkRow, list[PieceRow]]]:
    """The level-1 chunks a late pass reads (two pieces or more), each with its pieces."""
    jobs = []
    for plan in plans:
        owned = pieces_by_chunk(plan)
        for chunk in plan.chunks:
            own = owned.get(chunk.id, [])
            if chunk.level == 1 and len(own) >= 2:
                jobs.append((chunk, own))
    return jobs


class LatePass:
    """Late chunking: each level-1 chunk of two or more pieces goes through the model once, and
    each of its pieces gets the mean of the token states inside its span, normalised.

    Why: the model then reads every text once instead of twice (a chunk and, again, its pieces),
    and a piece's vector carries its chunk's context ("It was founded in 1902" knows what "it"
    is). A piece the model's window cut off (a chunk over 256 word pieces) or whose span is not
    found keeps a vector of its own, from the model on its text.
    """

    def __init__(self, plans: Sequence[SourcePlan], embedder: Any) -> None:
        self.chunks: dict[str, np.ndarray] = {}  # level-1 chunk id -> its vector
        self.pieces: dict[str, np.ndarray] = {}  # piece id -> its pooled vector
        jobs = late_chunks(plans)
        texts = list(dict.fromkeys(chunk.text for chunk, _ in jobs))
        states = dict(zip(texts, embedder.embed_tokens(texts))) if texts else {}
        self.texts = len(texts)
        for chunk, own in jobs:
            text = chunk.text
            state = states[text]
            self.chunks[chunk.id] = state.vector
            cursor = 0
            for piece in own:
                at = text.find(piece.text, cursor)
                if at < 0:
                    continue
                cursor = at + len(piece.text)
                inside = (state.offsets[:, 0] >= at) & (state.offsets[:, 1] <= cursor)
                if inside.any():
                    self.pieces[piece.id] = _normalised(state.tokens[inside].mean(axis=0))


def _normalised(v: np.ndarray) -> np.ndarray:
    return (v / max(float(np.linalg.norm(v)), 1e-12)).astype(np.float32)


def derived_level1(piece_vectors: Sequence[np.ndarray], piece_tokens: Sequence[int]) -> np.ndarray:
    """A level-1 chunk's vector from its pieces: the token-weighted mean, normalised.

    Why token-weighted: the model mean-pools over tokens, so a chunk's own vector is closest to a
    mean in which each piece counts by its length than to an unweighted one.
    """
    if len(piece_vectors) == 1:  # the chunk is one piece: its vector, bit for bit
        return np.asarray(piece_vectors[0], dtype=np.float32)
    weights = np.asarray([max(int(t), 1) for t in piece_tokens], dtype=np.float32)
    matrix = np.asarray(piece_vectors, dtype=np.float32)
    return _normalised((weights[:, None] * matrix).sum(axis=0))


def embed_plans(
    plans: Sequence[SourcePlan],
    embedder: Embedder,
    higher: str = "mean",
    level1: str = "model",
    piece_vectors: str = "separate",
) -> int:
    """Fill each plan's ``vectors`` (node id -> list of floats) for every node row; return the
    number of texts the model embedded (memo hits excluded).

    ``piece_vectors = "late"`` pools piece vectors from their chunk's token states
    (:class:`LatePass`) with an embedder that exposes them (``embed_tokens``; the ONNX one
    does); other embedders embed each piece on its own."""
    # without late chunking the pass covers nothing (no chunk, no model call)
    late = LatePass(
        plans if piece_vectors == "late" and has_token_states(embedder) else [], embedder
    )
    texts = texts_to_embed(plans, higher, level1, late.chunks, late.pieces)
    known = sentence_memo().take(embedder_key(embedder), texts)
    todo = [t for t in texts if t not in known]
    matrix = embedder.embed(todo) if todo else np.zeros((0, embedder.dimension), np.float32)
    index = {t: i for i, t in enumerate(todo)}

    def vec(text: str) -> np.ndarray:
        hit = known.get(text)
        return hit if hit is not None else matrix[index[text]]

    for plan in plans:
        vectors = plan.vectors
        vectors[plan.source.id] = vec(plan.source.embedding_text).tolist()
        for sec in plan.sections:
            vectors[sec.id] = vec(sec.embedding_text).tolist()
        owned = pieces_by_chunk(plan)
        for piece in plan.pieces:
            pooled = late.pieces.get(piece.id)
            vectors[piece.id] = (pooled if pooled is not None else vec(piece.text)).tolist()
        by_id: dict[str, np.ndarray] = {}
        for chunk in sorted(plan.chunks, key=lambda c: c.level):
            own = owned.get(chunk.id, [])
            if chunk.id in late.chunks:
                v = late.chunks[chunk.id]
            elif _chunk_needs_model(chunk, bool(own), higher, level1):
                v = np.asarray(vec(chunk.text), dtype=np.float32)
            elif chunk.level == 1:
                v = derived_level1([vec(p.text) for p in own], [p.tokens for p in own])
            else:
                v = _normalised(np.mean([by_id[k] for k in plan.children[chunk.id]], axis=0))
            by_id[chunk.id] = v
            vectors[chunk.id] = v.tolist()
    return len(todo) + late.texts


def embed_with_settings(plans: Sequence[SourcePlan], embedder: Embedder, settings: Any) -> int:
    """:func:`embed_plans` with the vector choices of ``settings.ingest`` (the platform's
    :class:`~kg_platform.config.Settings`): the one place every ingestion path embeds a plan."""
    ing = settings.tuning.ingest
    return embed_plans(
        plans, embedder, ing.embed_higher_levels, ing.level1_vectors, ing.piece_vectors
    )
