"""Late chunking (``ingest.piece_vectors = "late"``): one model pass per level-1 chunk gives the
chunk's own vector and, pooled over each piece's token span, the pieces' vectors."""

from __future__ import annotations

import numpy as np
import pytest

from kg_platform.config import EmbeddingSettings, Settings
from kg_platform.embedding import get_embedder
from kg_platform.embedding.memo import sentence_memo
from kg_platform.ingest.embed import embed_plans, texts_to_embed
from kg_platform.ingest.plan import SectionInput, Segment, SourceInput, pipeline_signature
from kg_platform.ingest.plan import plan_with_settings
from kg_platform.segmenting.chunker import get_chunker

SENTENCES = [
    "The platypus is a semiaquatic mammal endemic to eastern Australia.",
    "It is one of the few species of monotremes, the only mammals that lay eggs.",
    "Males have a venomous spur on the hind foot.",
    "The animal hunts underwater with its eyes, ears and nostrils closed.",
]


@pytest.fixture(scope="module")
def embedder():
    return get_embedder(EmbeddingSettings(threads=1))


def _plan(sentences: list[str], title: str = "Platypus", settings: Settings | None = None):
    settings = settings or Settings()
    inp = SourceInput(
        corpus="t-late",
        uri=f"mem://{title}",
        title=title,
        mime="text/markdown",
        sha256="0" * 64,
        bytes=1,
        sections=[SectionInput(title, 1, title, None, [Segment("text", sentences)])],
    )
    return plan_with_settings(inp, get_chunker(settings), settings)


def _unit(v) -> np.ndarray:
    v = np.asarray(v, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_pieces_are_pooled_from_their_chunks_single_pass(embedder) -> None:
    sentence_memo().clear()
    plan = _plan(SENTENCES)
    chunk = next(c for c in plan.chunks if c.level == 1)
    pieces = [p for p in plan.pieces if p.chunk_id == chunk.id]
    assert len(pieces) >= 2, "the test needs a chunk of several pieces"
    separate = embed_plans([_plan(SENTENCES)], embedder)
    late = embed_plans([plan], embedder, piece_vectors="late")
    assert late < separate  # the pieces of a late chunk are not embedded again

    # the chunk's vector is the model's own vector of its text
    assert np.allclose(plan.vectors[chunk.id], embedder.embed([chunk.text])[0], atol=1e-5)
    # each piece: the normalised mean of the token states inside its span, in that one pass
    (state,) = embedder.embed_tokens([chunk.text])
    text, cursor = chunk.text, 0
    for piece in pieces:
        at = text.index(piece.text, cursor)
        cursor = at + len(piece.text)
        inside = (state.offsets[:, 0] >= at) & (state.offsets[:, 1] <= cursor)
        assert inside.sum() >= 3
        assert np.allclose(
            plan.vectors[piece.id], _unit(state.tokens[inside].mean(axis=0)), atol=1e-5
        )
        # context changes the vector, but it stays close to the piece's own
        own = embedder.embed([piece.text])[0]
        cosine = float(np.dot(_unit(plan.vectors[piece.id]), own))
        assert 0.5 < cosine < 0.9999


def test_pieces_the_window_cut_off_get_vectors_of_their_own(embedder) -> None:
    # a chunk longer than the model's 256 word pieces: its last pieces were never read
    long = [f"Sentence number {i} talks about platypus habitat {i} in detail." for i in range(60)]
    plan = _plan(long, "Long", Settings(segment={"chunk_tokens": 1024}))
    embed_plans([plan], embedder, piece_vectors="late")
    last = plan.pieces[-1]
    assert np.allclose(plan.vectors[last.id], embedder.embed([last.text])[0], atol=1e-5)


def test_an_embedder_without_token_states_embeds_pieces_on_their_own(embedder) -> None:
    class VectorsOnly:
        model_name, dimension, quantize = embedder.model_name, embedder.dimension, "none"

        def embed(self, texts):
            return embedder.embed(texts)

    late, separate = _plan(SENTENCES), _plan(SENTENCES)
    embed_plans([late], VectorsOnly(), piece_vectors="late")
    embed_plans([separate], VectorsOnly())
    for a, b in zip(late.pieces, separate.pieces):
        assert np.allclose(late.vectors[a.id], separate.vectors[b.id], atol=1e-6)


def test_late_vectors_are_part_of_the_pipeline_signature() -> None:
    late = Settings()  # late chunking is the default
    separate = late.with_tuning(ingest={"piece_vectors": "separate"})
    assert "|pv=late" in pipeline_signature(late, "m")
    # separate vectors, the default before, add nothing: graphs stored with them still match
    assert "|pv=" not in pipeline_signature(separate, "m")
    # the model reads fewer texts: the pieces of chunks read whole are left out
    plan = _plan(SENTENCES)
    skip = {p.id for p in plan.pieces}
    assert len(texts_to_embed([plan], "mean", skip_pieces=skip)) < len(
        texts_to_embed([plan], "mean")
    )
