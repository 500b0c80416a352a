"""Pure parts of MoGG and propagation: the per-radius Cypher files, seed scoring, rescoring."""

from __future__ import annotations

from importlib import resources

import pytest

from kg_platform.retrieval.strategies import mogg
from tests.support.reference import seed_scores
from kg_platform.retrieval.base import RetrievedItem
from kg_platform.retrieval.strategies.propagate import rank_with, rescore


@pytest.mark.parametrize("hops", list(mogg.HOPS))
@pytest.mark.parametrize("radius", range(mogg.MAX_RADIUS + 1))
def test_per_radius_files_are_the_rendered_template(radius, hops):
    name = mogg.query_name(radius, hops).split("/", 1)[1]
    path = resources.files("kg_platform").joinpath("cypher", "retrieval", f"{name}.cypher")
    assert path.read_text(encoding="utf-8") == mogg.render_query(radius, hops), (
        "edit cypher/retrieval/mogg.cypher.template, then run `python -m kg_platform.retrieval.strategies.mogg`"
    )
    text = mogg.render_query(radius, hops)
    rels = mogg.HOPS[hops][0]
    assert text.count(f"[:{rels}*0..{radius}]") == 2
    assert f"UNWIND range(1, {radius + 1}) AS g" in text
    assert "{radius}" not in text and "{levels}" not in text and "{hops}" not in text


def test_entity_walk_file_is_the_rendered_template():
    from kg_platform.retrieval.strategies import entity

    path = resources.files("kg_platform").joinpath("cypher", entity.QUERY + ".cypher")
    text = entity.render_walk_query()
    assert path.read_text(encoding="utf-8") == text, (
        "edit cypher/retrieval/entity_ppr.cypher.template, then run "
        "`python -m kg_platform.retrieval.strategies.entity`"
    )
    for t in range(1, entity.STEPS + 1):
        assert f"CALL (w{t - 1}) {{\n  UNWIND w{t - 1} AS x" in text
        assert f"AS w{t}\n}}" in text
    assert "{w_in}" not in text and "{w_out}" not in text and "@step" not in text


def test_render_refuses_unsupported_radius():
    from kg_platform.errors import RetrievalError

    with pytest.raises(RetrievalError, match="outside"):
        mogg.render_query(mogg.MAX_RADIUS + 1)
    with pytest.raises(RetrievalError, match="not one of"):
        mogg.render_query(1, "similar+cites")


def test_seed_scores_sum_normalised_index_scores():
    hits = {
        "bm25": [("a", 10.0), ("b", 6.0), ("c", 2.0)],
        "vector": [("c", 0.9), ("d", 0.7), ("a", 0.5)],
    }
    # min-max per index: bm25 a 1, b 0.5, c 0; vector c 1, d 0.5, a 0
    assert seed_scores(hits, seeds=3, normalise="minmax") == {"a": 1.0, "c": 1.0, "b": 0.5}
    # each index is cut to `seeds` before normalising, then the sum is cut again
    assert seed_scores(hits, seeds=1, normalise="max") == {"a": 1.0}
    assert list(seed_scores({"bm25": hits["bm25"]}, 2, "max")) == ["a", "b"]


def _item(cid: str, **layers: tuple[float, int]) -> RetrievedItem:
    breakdown = {f"cos_{x}": s for x, (s, _) in layers.items()}
    breakdown.update({f"rank_{x}": float(r) for x, (_, r) in layers.items()})
    return RetrievedItem(id=cid, text=cid, score=0.0, breakdown=breakdown)


def test_rescore_modes():
    per, ranks = {"C": 0.8, "T": 0.5}, {"C": 1.0, "T": 3.0}
    lam = {"C": 0.5, "T": 0.2}
    assert rescore(per, lam, "wsum") == pytest.approx(0.5 * 0.8 + 0.2 * 0.5)
    assert rescore(per, lam, "wmax") == pytest.approx(0.4)
    assert rescore(per, lam, "rrf", ranks) == pytest.approx(0.5 / 61 + 0.2 / 63)


def test_rank_with_reorders_by_weights():
    lexical_only = _item("x", T=(1.0, 1))
    dense_only = _item("y", C=(0.6, 1))
    items = [lexical_only, dense_only]
    assert [it.id for it in rank_with(items, {"C": 1.0, "T": 0.35}, "wsum")] == ["y", "x"]
    assert [it.id for it in rank_with(items, {"C": 0.5, "T": 1.0}, "wsum")] == ["x", "y"]
    assert [it.id for it in rank_with(items, {"C": 1.0, "T": 1.0}, "rrf")] == [
        "x",
        "y",
    ]  # tie -> id


def test_mog_two_step_selection_on_hand_made_scores():
    """Spec §1.4 by hand: level-1 chunks a..d, level-2 containers AB and CD, w = (0.3, 0.7).

    Level 1 hits a 10, c 6, d 2 -> min-max 1, 0.5, 0; level 2 hits CD 8, AB 4 -> 1, 0.
    score(a) = 0.3*1 + 0.7*0 = 0.3, score(b) = 0.7*0 = 0, score(c) = 0.3*0.5 + 0.7*1 = 0.85,
    score(d) = 0.3*0 + 0.7*1 = 0.7. At g_r = 2, c and d share CD (kept once, with c's score).
    """
    from kg_platform.retrieval.strategies.mog import CorpusPlan
    from tests.support.reference import reference_select

    hits = {("K", 1): [("a", 10.0), ("c", 6.0), ("d", 2.0)], ("K", 2): [("CD", 8.0), ("AB", 4.0)]}
    ancestors = {
        "a": {1: "a", 2: "AB"},
        "b": {1: "b", 2: "AB"},
        "c": {1: "c", 2: "CD"},
        "d": {1: "d", 2: "CD"},
    }
    corpus_of = dict.fromkeys(ancestors, "K")
    at_2 = reference_select(
        hits, ancestors, corpus_of, [CorpusPlan("K", (0.3, 0.7), 2)], k_r=3, k=2
    )
    assert [(cid, round(s, 9), c) for cid, s, c in at_2] == [("CD", 0.85, "c"), ("AB", 0.3, "a")]
    at_1 = reference_select(
        hits, ancestors, corpus_of, [CorpusPlan("K", (0.3, 0.7), 1)], k_r=3, k=2
    )
    assert [(cid, round(s, 9)) for cid, s, _ in at_1] == [("c", 0.85), ("d", 0.7)]
    # k_r = 1 keeps only the best hit per level: a (level 1) and CD (level 2), both normalised to 1
    top1 = reference_select(
        hits, ancestors, corpus_of, [CorpusPlan("K", (0.3, 0.7), 1)], k_r=1, k=4
    )
    assert [(cid, round(s, 9)) for cid, s, _ in top1] == [("c", 0.7), ("d", 0.7), ("a", 0.3)]
