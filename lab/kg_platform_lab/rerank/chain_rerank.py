"""The chain rerank: a final ranking that judges a candidate together with the passage that leads
to it.

The late rerank scores each candidate against the question alone, and the second hop of a
multi-hop question (the paragraph about the director the first paragraph names) shares few words
with the question, so the rerank pushed it out of the budget although the walk had found it. The
chain rerank keeps the late rerank's score and adds, for each candidate, what links it to the
rerank's first candidates (its *anchors*, the likely first hops):

- **title link**: the candidate's source title is named in an anchor's text, or the anchor's
  title in the candidate's text (in encyclopaedic passages a paragraph that names another's title
  refers to it);
- **entity link**: the candidate and an anchor mention a bridging entity (one 2..
  ``entity_graph.max_degree`` chunks mention) that the question does not name;
- **hop score** (optional): the candidate's cosine and MaxSim against the question read together
  with the anchor's text (the second-hop query of multi-hop dense retrievers, MDR), min-max
  scaled per anchor.

score(c) = min-max(late score)(c) + ``title`` x max_a title_link(a, c) + ``entity`` x
max_a entity_link(a, c) + ``hop`` x max_a hop(a, c), over anchors a other than c. No weights ship
(:data:`SHIPPED` is all 0: no weighting chosen on two multi-hop dev sets won on the third in
every rotation, lab/results/2026-12-02/chain-rank/); ``rerank.chain_weights`` sets them. The
links cost one small Cypher read per question (``retrieval/chain_links``); the hop score reads
one more query per anchor through the model (the candidates' states are those the late rerank
already read).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from kg_platform.errors import ConfigError
from kg_platform.retrieval.rerank.chain_pair import hop_scores
from kg_platform.retrieval.rerank.late_interaction import min_max
from kg_platform_lab.queries import lab_read

if TYPE_CHECKING:
    from kg_platform.retrieval.base import RetrievalContext

_PAREN = re.compile(r"\s*\([^)]*\)\s*$")
#: a title shorter than this (after its parenthesis is dropped) is too common a word to link by
MIN_TITLE_CHARS = 4


@dataclass(frozen=True)
class ChainWeights:
    """How much each link to an anchor adds to a candidate's (min-max scaled) late score."""

    title: float = 0.0
    entity: float = 0.0
    hop: float = 0.0
    #: how many of the late rerank's first candidates are anchors
    anchors: int = 1

    @property
    def active(self) -> bool:
        return bool(self.title or self.entity or self.hop)


@dataclass(frozen=True)
class Candidate:
    """What the chain rerank reads of one candidate."""

    id: str
    text: str
    title: str = ""
    entities: tuple[str, ...] = ()


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


def link_matrices(question: str, candidates: Sequence[Candidate]) -> tuple[np.ndarray, np.ndarray]:
    """``(title, entity)`` link matrices over the candidates (1 where linked, 0 else; 0 on the
    diagonal and between chunks of one source)."""
    n = len(candidates)
    title = np.zeros((n, n), dtype=np.float64)
    entity = np.zeros((n, n), dtype=np.float64)
    q = question.lower()
    ents = [{e for e in c.entities if e and e.lower() not in q} for c in candidates]
    for i, a in enumerate(candidates):
        for j in range(i + 1, n):
            b = candidates[j]
            if a.title and a.title == b.title:
                continue
            if names(b.title, a.text) or names(a.title, b.text):
                title[i, j] = title[j, i] = 1.0
            if ents[i] & ents[j]:
                entity[i, j] = entity[j, i] = 1.0
    return title, entity


def anchors_of(late: np.ndarray, count: int) -> list[int]:
    """The indexes of the ``count`` best late scores (ties: the strategy's order)."""
    order = sorted(range(len(late)), key=lambda i: (-round(float(late[i]), 9), i))
    return order[:count]


def chain_scores(
    late: np.ndarray,
    title: np.ndarray,
    entity: np.ndarray,
    weights: ChainWeights,
    hop: np.ndarray | None = None,
    anchors: Sequence[int] | None = None,
) -> np.ndarray:
    """Each candidate's chain score (module docstring). ``hop``: one row per anchor (the
    candidates' hop scores against that anchor, already scaled), in the order of ``anchors``
    (default: :func:`anchors_of`)."""
    n = len(late)
    score = min_max(np.asarray(late, dtype=np.float64)) if n else np.zeros(0)
    if n < 2 or not weights.active:
        return score
    anchors = list(anchors) if anchors is not None else anchors_of(late, weights.anchors)
    anchors = anchors[: weights.anchors]
    bonus = np.zeros(n, dtype=np.float64)
    for r, a in enumerate(anchors):
        mine = np.zeros(n, dtype=np.float64)
        if weights.title:
            mine = mine + weights.title * title[a]
        if weights.entity:
            mine = mine + weights.entity * entity[a]
        if weights.hop and hop is not None and r < len(hop):
            mine = mine + weights.hop * np.asarray(hop[r], dtype=np.float64)
        mine[a] = 0.0  # an anchor is not its own link
        bonus = np.maximum(bonus, mine)
    return score + bonus


def chain_order(
    late: np.ndarray,
    title: np.ndarray,
    entity: np.ndarray,
    weights: ChainWeights,
    hop: np.ndarray | None = None,
    anchors: Sequence[int] | None = None,
) -> list[int]:
    """The candidates' indexes in the chain rerank's order (ties: the strategy's order)."""
    scores = chain_scores(late, title, entity, weights, hop, anchors)
    return sorted(range(len(scores)), key=lambda i: (-round(float(scores[i]), 9), i))


#: the shipped weights: none. No weighting chosen on two multi-hop dev sets won on the third in
#: every rotation (lab/results/2026-12-02/chain-rank/), so the product does not carry it: the
#: study lives in the lab (kg_platform_lab.rerank.chain_study).
SHIPPED = ChainWeights()


def parse_weights(raw: dict[str, float] | None) -> ChainWeights:
    """Weights given as a mapping (``{"title": 0.5, "anchors": 2}``), else :data:`SHIPPED`."""
    if raw is None:
        return SHIPPED
    unknown = set(raw) - set(ChainWeights.__dataclass_fields__)
    if unknown:
        raise ConfigError(
            f"unknown chain-rerank weight(s) {sorted(unknown)}",
            hint="the chain weights are title, entity, hop and anchors, e.g. "
            '\'{"title": 0.5, "anchors": 2}\'',
        )
    anchors = int(raw.get("anchors", 1))
    if anchors < 1:
        raise ConfigError(
            f"the chain rerank needs at least one anchor, got {anchors}",
            hint="set anchors to 1 or more",
        )
    return ChainWeights(
        title=float(raw.get("title", 0.0)),
        entity=float(raw.get("entity", 0.0)),
        hop=float(raw.get("hop", 0.0)),
        anchors=anchors,
    )


def read_candidates(
    ids: Sequence[str], texts: Sequence[str], ctx: "RetrievalContext"
) -> list[Candidate]:
    """The candidates' titles and bridging entities, in one read (``retrieval/chain_links``)."""
    rows = {
        str(r["id"]): r
        for r in lab_read(
            ctx.graph,
            "evaluation/chain_links",
            ids=list(dict.fromkeys(ids)),
            max_degree=ctx.settings.tuning.entity_graph.max_degree,
        )
    }
    out = []
    for i, text in zip(ids, texts, strict=True):
        row: dict[str, Any] = dict(rows.get(i) or {})
        entities = tuple(str(e) for e in (row.get("entities") or []) if e)
        out.append(Candidate(id=i, text=text, title=str(row.get("title") or ""), entities=entities))
    return out


def chain_rerank_scores(
    query: str,
    ids: Sequence[str],
    texts: Sequence[str],
    late: np.ndarray,
    ctx: "RetrievalContext",
    weights: ChainWeights,
) -> np.ndarray:
    """The chain scores of the late rerank's candidates (``late``: their late scores, in the
    strategy's order): see the module docstring."""
    if len(ids) < 2 or not weights.active:
        return min_max(np.asarray(late, dtype=np.float64)) if len(ids) else np.zeros(0)
    candidates = read_candidates(ids, texts, ctx)
    title, entity = link_matrices(query, candidates)
    anchors = anchors_of(late, weights.anchors)
    hop = hop_scores(query, anchors, ids, texts, ctx) if weights.hop else None
    return chain_scores(late, title, entity, weights, hop, anchors)
