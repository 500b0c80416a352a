"""The incremental piece-graph update equals a full build with the same frozen statistics.

Pure: the pieces are sentences of real dev-corpus paragraphs, the "database" is a dict, and its
apply step mirrors the Cypher (ingest/similar.py): set choices, merge new edges, drop a pair only
when neither side still chooses the other. Candidates are exhaustive here, so any difference is
a bug of the update itself, not of the fulltext candidate search.
"""

from __future__ import annotations

import json
import re

import pytest

from kg_platform.granularity.bm25 import BM25Stats
from kg_platform.granularity.incremental import StoredPiece, update_choices
from kg_platform.granularity.piece_graph import build_full
from tests.support.data import SHARED


K, T = 3, 0.2


def _sentences(n: int) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    path = SHARED / "bench" / "dev" / "corpus" / "hotpotqa.jsonl"
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            for j, sent in enumerate(re.split(r"(?<=[.!?])\s+", row["text"])):
                if sent.strip():
                    out.append((f"{row['doc_id']}#{j:03d}", sent))
            if len(out) >= n:
                break
    return sorted(out[:n])


class Store:
    """The graph as the Cypher keeps it: texts, choices per piece, SIMILAR edges (a < b)."""

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}
        self.choices: dict[str, tuple[tuple[str, float], ...] | None] = {}
        self.edges: dict[tuple[str, str], float] = {}

    def full(self, stats: BM25Stats | None = None) -> BM25Stats:
        ids = sorted(self.texts)
        graph = build_full([self.texts[i] for i in ids], K, T, stats=stats)
        self.choices = {
            ids[u]: tuple((ids[v], s) for v, s in c) for u, c in enumerate(graph.choices)
        }
        self.edges = {(ids[e.a], ids[e.b]): e.score for e in graph.edges}
        return graph.stats

    def update(self, pending_ids: set[str], stats: BM25Stats) -> None:
        pending = [StoredPiece(i, self.texts[i], self.choices.get(i)) for i in sorted(pending_ids)]
        candidates = {
            i: StoredPiece(i, t, self.choices.get(i))
            for i, t in self.texts.items()
            if i not in pending_ids
        }
        pools = {i: list(self.texts) for i in pending_ids}  # exhaustive candidates
        upd = update_choices(pending, candidates, pools, stats, K, T)
        for pid, chosen in upd.choices.items():
            self.choices[pid] = tuple(chosen)
        for a, b, s in upd.upsert:
            self.edges[(a, b)] = s
        for a, b in upd.maybe_drop:
            if b not in {c for c, _ in self.choices.get(a) or ()} and a not in {
                c for c, _ in self.choices.get(b) or ()
            }:
                self.edges.pop((a, b), None)

    def remove(self, doomed: set[str]) -> set[str]:
        """Delete pieces (DETACH DELETE); return the neighbours that must choose again."""
        neighbours = set()
        for a, b in list(self.edges):
            if a in doomed or b in doomed:
                neighbours.update({a, b})
                del self.edges[(a, b)]
        for d in doomed:
            del self.texts[d]
            self.choices.pop(d, None)
        return neighbours - doomed


def _assert_equal(store: Store, stats: BM25Stats) -> None:
    want = Store()
    want.texts = dict(store.texts)
    want.full(stats)
    assert want.edges, "the sample must produce edges"
    assert set(store.edges) == set(want.edges)
    assert max(abs(store.edges[e] - want.edges[e]) for e in want.edges) < 1e-9
    assert store.choices == want.choices


@pytest.fixture(scope="module")
def sentences() -> list[tuple[str, str]]:
    if not (SHARED / "bench").is_dir():
        pytest.skip(f"needs the shared bench data, not at {SHARED / 'bench'} (set KGP_SHARED_DIR)")
    return _sentences(600)


def test_adding_replacing_and_removing_equals_a_full_build(sentences):
    store = Store()
    store.texts = dict(sentences[:300])
    stats = store.full()  # frozen from here on
    before = dict(store.edges)

    store.texts.update(dict(sentences[300:450]))  # add
    store.update({i for i, _ in sentences[300:450]}, stats)
    assert store.edges != before
    _assert_equal(store, stats)

    replaced = [i for i, _ in sentences[10:40]]  # replace: same ids, other texts
    reopened = store.remove(set(replaced))
    for j, pid in enumerate(replaced):
        store.texts[pid] = sentences[450 + j][1]
    store.update(reopened | set(replaced), stats)
    _assert_equal(store, stats)

    doomed = {i for i, _ in sentences[100:160]}  # remove
    reopened = store.remove(doomed)
    store.update(reopened, stats)
    _assert_equal(store, stats)

    store.texts.update(dict(sentences[480:600]))  # add again, new terms included
    store.update({i for i, _ in sentences[480:600]}, stats)
    _assert_equal(store, stats)


def test_frozen_statistics_make_a_pair_score_independent_of_other_pieces(sentences):
    texts = [t for _, t in sentences[:50]]
    stats = BM25Stats.of(texts)
    small = build_full(texts[:20], K, T, stats=stats)
    large = build_full(texts, K, T, stats=stats)
    small_edges = {(e.a, e.b): e.score for e in small.edges}
    large_edges = {(e.a, e.b): e.score for e in large.edges}
    common = set(small_edges) & set(large_edges)
    assert common
    assert all(abs(small_edges[e] - large_edges[e]) < 1e-12 for e in common)
    fresh = {(e.a, e.b): e.score for e in build_full(texts[:20], K, T).edges}
    assert any(abs(fresh[e] - small_edges[e]) > 1e-6 for e in set(fresh) & set(small_edges))
