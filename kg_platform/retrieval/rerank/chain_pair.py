"""The chain-pair score: a final ranking that judges a candidate with the passages that lead to it.

The late rerank scores each candidate against the question alone, so the second hop of a
multi-hop question (the paragraph about the director the first paragraph names) shares few words
with the question and falls out of the budget although the walk found it. Linking alone is not
selective (most candidates linked to the first hop are not gold). The chain-pair score is a small
logistic model, fitted on multi-hop questions, that reads for each of the late rerank's
candidates its late score and rank and, for each of the rerank's first two candidates (the
*anchors*, the likely first hops): whether it is that anchor, whether it is linked to it by a
title one names (``title``), a bridging entity the question does not name (``entity``) or a
``REFERENCES`` edge between their sources (``refs``), and its MDR-style hop score (cosine and
MaxSim against the question read together with the anchor's text); plus whether the question
names its title and the question's shape. The candidates are then ordered by the model's
probability that they hold evidence.

The weights ship in ``kg_platform/models/rerank/chain-pair.json`` (fitted on the three multi-hop
dev sets, each rotation checked on the set it was not fitted on: the lab's record
``lab/results/2026-12-03/chain-pair/``); ``rerank.chain_pair`` switches the stage on. Cost per
question: one small Cypher read (``retrieval/chain_pair_links``) and two more question encodings.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from kg_platform.errors import ConfigError
from kg_platform.retrieval.rerank.late_interaction import min_max

if TYPE_CHECKING:
    from kg_platform.retrieval.base import RetrievalContext

SHIPPED_MODEL = Path(__file__).resolve().parents[2] / "models" / "rerank" / "chain-pair.json"
ANCHORS = 2
LINKS = ("title", "entity", "refs")


@dataclass(frozen=True)
class ChainShape:
    """What the model reads, as its file says (``shape``; a file without it is the first model's
    shape): how many of the late rerank's first candidates are anchors, whether each anchor's MDR
    hop score is computed (two more question encodings), and whether a candidate two links from
    an anchor counts (``two_step``: linked to a candidate that is linked to the anchor, weighted
    by that middle candidate's late score; the third hop of a three-hop chain)."""

    anchors: int = ANCHORS
    hop: bool = True
    two_step: bool = False

    @classmethod
    def of(cls, model: dict[str, Any]) -> "ChainShape":
        raw = model.get("shape") or {}
        return cls(
            anchors=int(raw.get("anchors", cls.anchors)),
            hop=bool(raw.get("hop", cls.hop)),
            two_step=bool(raw.get("two_step", cls.two_step)),
        )

    def as_dict(self) -> dict[str, Any]:
        return {"anchors": self.anchors, "hop": self.hop, "two_step": self.two_step}


#: the shape of a model file that names none (the first chain-pair model)
FIRST_SHAPE = ChainShape()
#: words that mark a comparison question ("Which is older, A or B?", "Are both X and Y ...?")
COMPARISON = re.compile(
    r"\b(both|same|either|neither|older|younger|earlier|later|first|longer|shorter|"
    r"larger|smaller|bigger|higher|lower|more|less|fewer)\b|\bor\b|\bthan\b",
    re.IGNORECASE,
)
_PAREN = re.compile(r"\s*\([^)]*\)\s*$")
#: a title shorter than this (after its parenthesis is dropped) is too common a word to link by
MIN_TITLE_CHARS = 4


@lru_cache(maxsize=20_000)
def _title_pattern(title: str) -> re.Pattern[str] | None:
    core = _PAREN.sub("", title or "").strip().lower()
    if len(core) < MIN_TITLE_CHARS:
        return None
    return re.compile(r"(?<!\w)" + re.escape(core) + r"(?!\w)")


def names(title: str, text: str) -> bool:
    """Whether ``text`` names ``title`` (its parenthetical qualifier dropped, "Paris (film)" ->
    "paris"), as whole words, ignoring case."""
    pattern = _title_pattern(title)
    return pattern is not None and pattern.search(text.lower()) is not None


def link_matrices(
    question: str, items: Sequence[dict[str, Any]]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(title, entity, refs)`` link matrices over the candidates (each item: ``text``,
    ``title``, ``entities``, ``source``, ``refs``); 1 where linked, 0 on the diagonal and
    between chunks of one source."""
    n = len(items)
    title = np.zeros((n, n), dtype=np.float64)
    entity = np.zeros((n, n), dtype=np.float64)
    refs = np.zeros((n, n), dtype=np.float64)
    q = question.lower()
    ents = [{e for e in (it.get("entities") or ()) if e and e.lower() not in q} for it in items]
    srcs = [str(it.get("source") or "") for it in items]
    outs = [set(it.get("refs") or ()) for it in items]
    for i, a in enumerate(items):
        for j in range(i + 1, n):
            b = items[j]
            ta, tb = a.get("title") or "", b.get("title") or ""
            if srcs[i] and srcs[j] and srcs[i] != srcs[j]:
                if srcs[j] in outs[i] or srcs[i] in outs[j]:
                    refs[i, j] = refs[j, i] = 1.0
            if ta and ta == tb:
                continue
            if names(tb, a["text"]) or names(ta, b["text"]):
                title[i, j] = title[j, i] = 1.0
            if ents[i] & ents[j]:
                entity[i, j] = entity[j, i] = 1.0
    return title, entity, refs


def feature_names(shape: ChainShape = FIRST_SHAPE) -> list[str]:
    out = ["late", "rank"]
    for a in range(shape.anchors):
        out += [f"is_a{a}", *(f"{k}_a{a}" for k in LINKS)]
        out += [f"hop_a{a}"] if shape.hop else []
        out += [f"two_step_a{a}"] if shape.two_step else []
    out += ["margin", "q_names_c", "q_names_a0", "comparison", "q_words"]
    for k in LINKS:
        out += [f"{k}_x_qnames", f"{k}_x_comparison", f"{k}_x_late"]
    return out


def late_order(late: np.ndarray) -> list[int]:
    """The candidates' indexes by late score (ties: the strategy's order)."""
    return sorted(range(len(late)), key=lambda j: (-round(float(late[j]), 9), j))


def chain_features(
    question: str,
    items: Sequence[dict[str, Any]],
    late: np.ndarray,
    hop: np.ndarray | None,
    anchors: Sequence[int],
    shape: ChainShape = FIRST_SHAPE,
) -> np.ndarray:
    """One row per candidate (columns: :func:`feature_names` of ``shape``). ``late``: their
    late scores; ``hop``: one row per anchor of min-max cosine + min-max MaxSim against the
    question read with that anchor's text, or None; ``anchors``: the late order's first
    indexes."""
    n = len(items)
    title, entity, refs = link_matrices(question, items)
    late_mm = min_max(np.asarray(late, dtype=np.float64))
    linked = np.maximum(np.maximum(title, entity), refs) if shape.two_step else None
    rank = np.zeros(n)
    for pos, j in enumerate(late_order(np.asarray(late))):
        rank[j] = 1.0 - pos / max(n - 1, 1)
    q = question.lower()
    q_names_c = np.asarray([1.0 if names(it.get("title") or "", q) else 0.0 for it in items])
    comparison = 1.0 if COMPARISON.search(question) else 0.0
    q_words = min(len(question.split()), 40) / 40.0
    srt = sorted(late_mm, reverse=True)
    margin = float(srt[0] - srt[2]) if n > 2 else 0.0
    cols: list[np.ndarray] = [late_mm, rank]
    any_link = {k: np.zeros(n) for k in LINKS}
    for r in range(shape.anchors):
        a = anchors[r] if r < len(anchors) else None
        is_a = np.zeros(n)
        links = {k: np.zeros(n) for k in LINKS}
        h = np.zeros(n)
        two = np.zeros(n)
        if a is not None:
            is_a[a] = 1.0
            links = {"title": title[a].copy(), "entity": entity[a].copy(), "refs": refs[a].copy()}
            if hop is not None and r < len(hop):
                h = np.asarray(hop[r], dtype=np.float64)[:n].copy()
                h[a] = 0.0
            if linked is not None:
                two = _two_step(linked, late_mm, a)
        cols.append(is_a)
        for k in LINKS:
            cols.append(links[k])
            any_link[k] = np.maximum(any_link[k], links[k])
        if shape.hop:
            cols.append(h)
        if shape.two_step:
            cols.append(two)
    q_names_a0 = 1.0 if anchors and names(items[anchors[0]].get("title") or "", q) else 0.0
    cols += [
        np.full(n, margin),
        q_names_c,
        np.full(n, q_names_a0),
        np.full(n, comparison),
        np.full(n, q_words),
    ]
    for k in LINKS:
        cols += [any_link[k] * q_names_c, any_link[k] * comparison, any_link[k] * late_mm]
    return np.stack(cols, axis=1)


def _two_step(linked: np.ndarray, late_mm: np.ndarray, a: int) -> np.ndarray:
    """Per candidate c: the highest late score (min-max) of a middle candidate j linked to the
    anchor ``a`` and to c (j, c and a distinct); 0 where no such j is, and 0 for the anchor. A
    direct neighbour of the anchor can score too, when another neighbour also links it."""
    middle = linked[a] * late_mm  # (n,): j's weight as a bridge from the anchor
    middle[a] = 0.0
    via = linked * middle[:, None]  # via[j, c]: the bridge j's weight when j links c
    np.fill_diagonal(via, 0.0)
    two: np.ndarray = via.max(axis=0)  # n >= 1: ``a`` is one of the candidates
    two[a] = 0.0
    return two


def logits(model: dict[str, Any], x: np.ndarray) -> np.ndarray:
    """The model's log-odds that each row's candidate holds evidence."""
    w = np.asarray(model["coef"], dtype=np.float64)
    mean = np.asarray(model["mean"], dtype=np.float64)
    scale = np.asarray(model["scale"], dtype=np.float64)
    return np.asarray(((x - mean) / scale) @ w + float(model["intercept"]))


@lru_cache(maxsize=2)
def load_chain_pair_model(path: Path = SHIPPED_MODEL) -> dict[str, Any]:
    """The chain-pair model (``features``, ``mean``, ``scale``, ``coef``, ``intercept``)."""
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"cannot read the chain-pair model {path}: {exc}",
            hint="reinstall kg-platform, or set KGP_RERANK__CHAIN_PAIR=false",
        ) from exc
    if data.get("features") != feature_names(ChainShape.of(data)):
        raise ConfigError(
            f"{path} was fitted on other features than this version computes",
            hint="refit it with the lab's chain_pair study, or set KGP_RERANK__CHAIN_PAIR=false",
        )
    return data


def read_links(ids: Sequence[str], ctx: "RetrievalContext") -> dict[str, dict[str, Any]]:
    """Each candidate's source, title, bridging entities and REFERENCES neighbours, in one read."""
    rows = ctx.graph.read(
        "retrieval/chain_pair_links",
        ids=list(dict.fromkeys(ids)),
        max_degree=ctx.settings.tuning.entity_graph.max_degree,
    )
    return {str(r["id"]): dict(r) for r in rows}


def hop_scores(
    query: str,
    anchors: Sequence[int],
    ids: Sequence[str],
    texts: Sequence[str],
    ctx: "RetrievalContext",
) -> np.ndarray:
    """Per anchor, each candidate's min-max cosine + min-max MaxSim against the question read
    together with the anchor's text (the candidates' word-piece states are those the late
    rerank read, from its cache)."""
    from kg_platform.retrieval.rerank.late_interaction import (
        _token_states,
        content_pieces,
        maxsim,
        question_embedder,
        reading_texts,
        rerank_embedder,
    )

    states = _token_states(rerank_embedder(ctx), reading_texts(ids, texts, ctx))
    rows = []
    for a in anchors:
        read = f"{query}\n{texts[a]}"
        q_vec, q_tok, q_off = _token_states(question_embedder(ctx), [read])[0]
        q_tok = q_tok[content_pieces(read, q_off)]
        cos = np.asarray([float(vec @ q_vec) for vec, _, _ in states], dtype=np.float64)
        sim = np.asarray([maxsim(q_tok, tok) for _, tok, _ in states], dtype=np.float64)
        rows.append(min_max(cos) + min_max(sim))
    return np.stack(rows) if rows else np.zeros((0, len(ids)))


def chain_pair_scores(
    query: str,
    ids: Sequence[str],
    texts: Sequence[str],
    late: np.ndarray,
    ctx: "RetrievalContext",
    model: dict[str, Any] | None = None,
) -> np.ndarray:
    """The chain-pair log-odds of the late rerank's candidates (``late``: their late scores, in
    the strategy's order)."""
    model = model or load_chain_pair_model()
    links = read_links(ids, ctx)
    items = []
    for i, text in zip(ids, texts, strict=True):
        row = links.get(i) or {}
        items.append(
            {
                "id": i,
                "text": text,
                "title": str(row.get("title") or ""),
                "entities": [str(e) for e in (row.get("entities") or []) if e],
                "source": str(row.get("source") or ""),
                "refs": [str(r) for r in (row.get("refs") or []) if r],
            }
        )
    shape = ChainShape.of(model)
    anchors = late_order(np.asarray(late))[: shape.anchors]
    hop = hop_scores(query, anchors, ids, texts, ctx) if shape.hop else None
    return logits(model, chain_features(query, items, late, hop, anchors, shape))
