"""Plain-Python twins of the MoG and MoGG selections, which the tests hold the Cypher to.

They compute what ``retrieval/mog*.cypher`` and ``retrieval/mogg*.cypher`` compute, from hit
lists and graph maps given as Python data, so a test can check a query's output exactly.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kg_platform.retrieval.strategies.mog import CorpusPlan


def normalise_scores(scores: Sequence[float], mode: str) -> list[float]:
    """Per-level normalisation, exactly as the Cypher does it."""
    if not scores:
        return []
    hi, lo = max(scores), min(scores)
    if mode == "max":
        return [s / hi if hi > 0 else 1.0 for s in scores]
    return [(s - lo) / (hi - lo) if hi > lo else 1.0 for s in scores]


def reference_select(
    hits: Mapping[tuple[str, int], Sequence[tuple[str, float]]],
    ancestors: Mapping[str, Mapping[int, str]],
    corpus_of: Mapping[str, str],
    plans: Sequence[CorpusPlan],
    k_r: int,
    k: int,
    normalise: str = "minmax",
    skip_below: float = 0.0,
) -> list[tuple[str, float, str]]:
    """MoG two-step selection in Python: ``[(container id, score, best finest id)]``.

    ``hits[(corpus, g)]`` = index hits of level g (any order, any length; the top-k_r by
    (score desc, id asc) are used); ``ancestors[c][g]`` = the level-g chunk containing level-1
    chunk ``c`` (``ancestors[c][1] == c``); ``corpus_of`` maps level-1 chunk ids to corpora.
    Levels weighted below ``skip_below`` times the largest weight (except g_r) are not searched.
    """
    scores: dict[str, float] = {}
    ties: dict[str, float] = {}  # weighted raw scores: the order among equal scores
    finest_plan: dict[str, CorpusPlan] = {}
    for plan in plans:
        t_rs: dict[str, dict[int, float]] = {}
        raw_rs: dict[str, dict[int, float]] = {}
        for g in plan.searched_levels(skip_below):
            level_t: dict[str, float] = {}
            level_raw: dict[str, float] = {}
            # one index per level ((corpus, g) keys) or several ((corpus, g, index): hybrid),
            # each normalised on its own, then added
            for key, index_hits in hits.items():
                if tuple(key[:2]) != (plan.corpus, g):
                    continue
                top = sorted(index_hits, key=lambda h: (-h[1], h[0]))[:k_r]
                norm = normalise_scores([s for _, s in top], normalise)
                for (pid, raw), t in zip(top, norm):
                    level_t[pid] = level_t.get(pid, 0.0) + t
                    level_raw[pid] = level_raw.get(pid, 0.0) + raw
            for c, anc in ancestors.items():
                if corpus_of[c] == plan.corpus and anc.get(g) in level_t:
                    t_rs.setdefault(c, {})[g] = level_t[anc[g]]
                    raw_rs.setdefault(c, {})[g] = level_raw[anc[g]]
        for c, per in t_rs.items():
            scores[c] = sum(plan.w[g - 1] * t for g, t in per.items())
            ties[c] = sum(plan.w[g - 1] * raw for g, raw in raw_rs[c].items())
            finest_plan[c] = plan
    best: dict[str, tuple[float, str]] = {}
    for c in sorted(scores, key=lambda c: (-round(scores[c], 9), -round(ties[c], 9), c)):
        anc = ancestors[c]
        level = max(g for g in anc if g <= finest_plan[c].g_r)
        container = anc[level]
        if container not in best:
            best[container] = (scores[c], c)
    ranked = sorted(
        best.items(), key=lambda kv: (-round(kv[1][0], 9), -round(ties[kv[1][1]], 9), kv[0])
    )[:k]
    return [(cid, s, c) for cid, (s, c) in ranked]


@dataclass(frozen=True)
class PieceInfo:
    id: str
    corpus: str
    source_id: str
    doc_ord: int
    tokens: int


def _hood(
    centre: str, radius: int, edges: Mapping[str, Mapping[str, float]]
) -> list[tuple[str, int, float]]:
    """(piece, hop, best last-edge weight among shortest paths) within ``radius``, BFS."""
    hop = {centre: 0}
    ew = {centre: 1.0}
    frontier = deque([centre])
    while frontier:
        u = frontier.popleft()
        if hop[u] == radius:
            continue
        for v, w in edges.get(u, {}).items():
            if v not in hop:
                hop[v], ew[v] = hop[u] + 1, w
                frontier.append(v)
            elif hop[v] == hop[u] + 1:
                ew[v] = max(ew[v], w)
    return sorted(((p, hop[p], ew[p]) for p in hop), key=lambda x: (x[1], -x[2], x[0]))


def _cap(
    hood: Sequence[tuple[str, int, float]], max_hop: int, tokens: Mapping[str, int], cap: int
) -> list[str]:
    out: list[str] = []
    tok = 0
    for p, h, _ in hood:
        if h > max_hop:
            continue
        if not out or tok + tokens[p] <= cap:
            out.append(p)
            tok += tokens[p]
        else:
            break
    return out


def seed_scores(
    hits: Mapping[str, Sequence[tuple[str, float]]], seeds: int, normalise: str
) -> dict[str, float]:
    """Step 1: ``hits[index] = [(piece, score)]`` of one corpus -> the best ``seeds`` seeds.

    Each index's top ``seeds`` hits are normalised on their own; a piece's score is the sum
    over indexes; ties go to the smaller id (as the Cypher orders them).
    """
    total: dict[str, float] = {}
    for index_hits in hits.values():
        top = sorted(index_hits, key=lambda h: (-h[1], h[0]))[:seeds]
        for (pid, _), t in zip(top, normalise_scores([x for _, x in top], normalise)):
            total[pid] = total.get(pid, 0.0) + t
    ranked = sorted(total, key=lambda p: (-round(total[p], 9), p))[:seeds]
    return {p: total[p] for p in ranked}


def mogg_reference_select(
    seed_hits: Mapping[str, Mapping[str, Sequence[tuple[str, float]]]],
    pieces: Mapping[str, PieceInfo],
    edges: Mapping[str, Mapping[str, float]],
    plans: Sequence[CorpusPlan],
    *,
    seeds: int,
    k_r: int,
    cap: int,
    cand: int,
    k: int,
    radius: int,
    normalise: str = "minmax",
) -> list[tuple[str, float, list[str]]]:
    """MoGG selection in Python: ``[(centre id, score, members in document order)]``.

    ``seed_hits[corpus][index]`` = hits on pieces of that index (``"bm25"``: raw BM25,
    ``"vector"``: cosine); ``edges[u][v]`` = SIMILAR score (both directions present);
    ``radius`` = the query file's bound.
    """
    levels = radius + 1
    tok = {p: info.tokens for p, info in pieces.items()}
    pool: list[dict[str, Any]] = []
    for plan in plans:
        seed_t = seed_scores(seed_hits.get(plan.corpus, {}), seeds, normalise)
        hoods = {s: _hood(s, radius, edges) for s in seed_t}
        t_rs: dict[str, dict[int, float]] = {}
        for g in range(1, levels + 1):
            groups = []
            for s in seed_t:
                members = _cap(hoods[s], g - 1, tok, cap)
                groups.append((s, members, sum(seed_t[m] for m in members if m in seed_t)))
            groups.sort(key=lambda x: (-round(x[2], 9), x[0]))
            groups = groups[:k_r]
            norm = normalise_scores([x[2] for x in groups], normalise)
            for (_, members, _), t in zip(groups, norm):
                for m in members:
                    t_rs.setdefault(m, {})
                    t_rs[m][g] = max(t_rs[m].get(g, -np.inf), t)
        for c, per in t_rs.items():
            pool.append(
                {
                    "c": c,
                    "score": sum(plan.w[g - 1] * t for g, t in per.items()),
                    "g_r": plan.g_r,
                    "own": seed_t.get(c, -1.0),
                }
            )
    pool.sort(key=lambda x: (-round(x["score"], 9), -x["own"], x["c"]))
    out: list[tuple[str, float, list[str]]] = []
    seen: set[str] = set()
    for cd in pool[:cand]:
        if len(out) >= k or cd["c"] in seen:
            continue
        group = _cap(_hood(cd["c"], radius, edges), cd["g_r"] - 1, tok, cap)
        members = [p for p in group if p not in seen]
        centre_src = pieces[cd["c"]].source_id
        members.sort(
            key=lambda p: (
                0 if pieces[p].source_id == centre_src else 1,
                pieces[p].source_id,
                pieces[p].doc_ord,
                p,
            )
        )
        out.append((cd["c"], cd["score"], members))
        seen.update(group)
    return out
