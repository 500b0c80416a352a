"""The MoGG piece graph against an independent, naive BM25 written from the formula."""

import math
from collections import Counter

from kg_platform.granularity.bm25 import bm25_tokens
from kg_platform.granularity.piece_graph import build_piece_graph

TEXTS = [
    "The Havanese is a breed of toy dog from Cuba.",
    "The Havanese dog breed was developed in Cuba from the Blanquito.",
    "The Black Mouth Cur is a hunting dog from the Southern United States.",
    "Cur dogs are used for hunting raccoons and squirrels in Kentucky.",
    "Quantum chromodynamics describes the strong interaction.",
    "The strong interaction binds quarks into protons and neutrons.",
    "Cuba is an island country in the Caribbean Sea.",
    "of the and",
]


def naive_bm25(texts, k1=1.2, b=0.75):
    docs = [Counter(bm25_tokens(t)) for t in texts]
    n = len(docs)
    avg = sum(sum(d.values()) for d in docs) / n
    df = Counter(t for d in docs for t in d)

    def score(q, d):
        dl = sum(docs[d].values())
        total = 0.0
        for t in docs[q]:
            tf = docs[d].get(t, 0)
            if tf:
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                total += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avg))
        return total

    return score


def test_edges_obey_k_graph_threshold_and_max_of_both_directions():
    k, t = 2, 0.2
    score = naive_bm25(TEXTS)
    n = len(TEXTS)

    def s(u, v):
        self_score = score(u, u)
        return score(u, v) / self_score if self_score > 0 else 0.0

    expected = {}
    for u in range(n):
        ranked = sorted((v for v in range(n) if v != u), key=lambda v: (-round(s(u, v), 9), v))[:k]
        for v in ranked:
            if s(u, v) >= t and score(u, v) > 0:
                a, b = min(u, v), max(u, v)
                expected[(a, b)] = max(s(a, b), s(b, a))
    edges = build_piece_graph(TEXTS, k_graph=k, t_graph=t, block=3)  # small block: many blocks
    got = {(e.a, e.b): e.score for e in edges}
    assert set(got) == set(expected)
    assert expected, "the fixture must produce edges"
    for key, value in expected.items():
        assert abs(got[key] - value) < 1e-9
    assert all(e.a < e.b for e in edges)
    assert not any(7 in key for key in got)  # a stopword-only piece has no edges
    assert (0, 1) in got and (4, 5) in got


def test_threshold_one_keeps_only_covering_pairs_and_empty_input():
    assert build_piece_graph([], 3, 0.2) == []
    assert build_piece_graph(["only one"], 3, 0.2) == []
    edges = build_piece_graph(TEXTS, k_graph=3, t_graph=1.01)
    assert edges == []
