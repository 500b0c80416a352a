"""Pure parts of MoGG and propagation: the per-radius Cypher files, seed scoring, rescoring."""

from __future__ import annotations

from importlib import resources

import pytest

from kg_platform.retrieval import mogg
from kg_platform.retrieval.base import RetrievedItem
from kg_platform.retrieval.propagate import rank_with, rescore


@pytest.mark.parametrize("radius", range(mogg.MAX_RADIUS + 1))
def test_per_radius_files_are_the_rendered_template(radius):
    path = resources.files("kg_platform").joinpath("cypher", "retrieval", f"mogg_r{radius}.cypher")
    assert path.read_text(encoding="utf-8") == mogg.render_query(radius), (
        "edit cypher/retrieval/mogg.cypher.template, then run `python -m kg_platform.retrieval.mogg`")
    text = mogg.render_query(radius)
    assert f"[:SIMILAR*0..{radius}]" in text and f"UNWIND range(1, {radius + 1}) AS g" in text
    assert "{radius}" not in text and "{levels}" not in text


def test_render_refuses_unsupported_radius():
    with pytest.raises(Exception, match="outside"):
        mogg.render_query(mogg.MAX_RADIUS + 1)


def test_seed_scores_sum_normalised_index_scores():
    hits = {"bm25": [("a", 10.0), ("b", 6.0), ("c", 2.0)],
            "vector": [("c", 0.9), ("d", 0.7), ("a", 0.5)]}
    # min-max per index: bm25 a 1, b 0.5, c 0; vector c 1, d 0.5, a 0
    assert mogg.seed_scores(hits, seeds=3, normalise="minmax") == {"a": 1.0, "c": 1.0, "b": 0.5}
    # each index is cut to `seeds` before normalising, then the sum is cut again
    assert mogg.seed_scores(hits, seeds=1, normalise="max") == {"a": 1.0}
    assert list(mogg.seed_scores({"bm25": hits["bm25"]}, 2, "max")) == ["a", "b"]


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
    assert [it.id for it in rank_with(items, {"C": 1.0, "T": 1.0}, "rrf")] == ["x", "y"]  # tie -> id
