"""The late rerank's fitted weights: the shipped file, how the terms combine, and that the
rerank uses the weights of the strategy it follows."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

from kg_platform.config import Settings
from kg_platform.errors import ConfigError
from kg_platform.retrieval.base import RetrievedItem
from kg_platform.retrieval.rerank.late_interaction import combine
from kg_platform.retrieval.rerank.weights import (
    DEFAULT_CANDIDATES,
    SHIPPED_WEIGHTS,
    LateWeights,
    candidates_for,
    load_weights,
    most_candidates,
    weights_for,
)
from kg_platform.retrieval.rerank.selection import late_rerank


def test_combine_adds_the_strategy_score_and_its_rank_as_weighted():
    cos = np.array([0.1, 0.3, 0.2])
    sim = np.array([0.5, 0.4, 0.6])
    retrieval = np.array([9.0, 3.0, 1.0])
    fixed = combine(LateWeights(), cos, sim, retrieval)
    assert fixed.tolist() == pytest.approx([0.0 + 0.5, 1.0 + 0.0, 0.5 + 1.0])
    with_retrieval = combine(LateWeights(retrieval=2.0), cos, sim, retrieval)
    assert (with_retrieval - fixed).tolist() == pytest.approx([2.0, 0.5, 0.0])
    with_rank = combine(LateWeights(rank=1.0), cos, sim, retrieval)
    assert (with_rank - fixed).tolist() == pytest.approx([1.0, 0.5, 0.0])
    empty = np.zeros(0)
    assert combine(LateWeights(retrieval=1.0, rank=1.0), empty, empty, empty).size == 0


def test_a_strategy_that_found_nothing_passes_through_the_rerank(embedder):
    ctx = SimpleNamespace(settings=Settings(), embedder=embedder)
    assert late_rerank("anything?", [], ctx, "hybrid") == []


def test_weights_for_reads_the_strategy_entry_else_the_default(tmp_path):
    fitted = {
        "default": {"cosine": 1.0, "maxsim": 2.0},
        "strategies": {"propagate": {"cosine": 1.0, "maxsim": 4.0, "retrieval": 0.5}},
    }
    path = tmp_path / "weights.json"
    path.write_text(json.dumps(fitted), encoding="utf-8")
    settings = Settings(rerank={"weights_file": str(path)})
    assert weights_for("propagate", settings) == LateWeights(maxsim=4.0, retrieval=0.5)
    assert weights_for("hybrid", settings) == LateWeights(maxsim=2.0)


def test_the_shipped_file_fits_only_the_entity_walk_and_every_other_strategy_uses_the_rule():
    """The fit on QASPER's train split did not transfer (the file's ``fit`` record), so no
    strategy but ``entity`` has an entry and ``rerank.late_weight`` keeps its meaning for them.
    ``entity`` keeps its walk's rank as a term: the second hop shares few words with the
    question, and without the rank the rerank undid the walk (the ``entity_fit`` record)."""
    data = load_weights()
    assert data["default"] is None and set(data["strategies"]) == {"entity"}
    assert "did not transfer" in data["fit"]["result"]
    for strategy in ("hybrid", "propagate", "mogg", "auto", None):
        assert weights_for(strategy, Settings()) == LateWeights(cosine=1.0, maxsim=1.0)
    assert weights_for("auto", Settings().with_tuning(rerank={"late_weight": 0.5})) == LateWeights(
        maxsim=0.5
    )
    assert weights_for("entity", Settings()) == LateWeights(cosine=1.0, maxsim=1.0, rank=2.0)
    assert "leave one dataset out" in data["entity_fit"]["transfer"]


def test_a_missing_weights_file_says_what_to_do(tmp_path):
    with pytest.raises(ConfigError, match="cannot read the late rerank's weights") as err:
        weights_for("hybrid", Settings(rerank={"weights_file": str(tmp_path / "nope.json")}))
    assert "kgp lab rerank fit" in (err.value.hint or "")


def test_an_unknown_weight_name_is_a_config_error():
    with pytest.raises(ConfigError, match="unknown late-rerank weight"):
        LateWeights.from_dict({"cosine": 1.0, "bm25": 2.0})


def test_the_rerank_uses_the_weights_of_the_strategy_it_follows(embedder, monkeypatch):
    """With a strategy whose weights trust its own score, the rerank keeps the strategy's order
    even where cosine and MaxSim disagree; with the unfitted rule it does not."""
    import kg_platform.retrieval.rerank.weights as rw

    question = "Which treebank do they report results on?"
    texts = [
        "Related work on language modelling has explored recurrent architectures.",
        "We report results on the Penn Treebank.",
    ]
    items = [RetrievedItem(id=str(i), text=t, score=1.0 - i / 10) for i, t in enumerate(texts)]
    trusting = {
        "default": {"cosine": 1.0, "maxsim": 1.0},
        "strategies": {"trusting": {"cosine": 0.0, "maxsim": 0.0, "retrieval": 1.0}},
    }
    monkeypatch.setattr(rw, "load_weights", lambda path=SHIPPED_WEIGHTS: trusting)
    ctx = SimpleNamespace(
        settings=Settings().with_tuning(rerank={"section_context": False}), embedder=embedder
    )
    assert [it.id for it in late_rerank(question, items, ctx, "trusting")] == ["0", "1"]
    assert [it.id for it in late_rerank(question, items, ctx, "other")] == ["1", "0"]


def test_the_shipped_file_is_valid_json_with_provenance():
    data = json.loads(SHIPPED_WEIGHTS.read_text(encoding="utf-8"))
    assert "default" in data and "about" in data and data["fit"]["record"]


def test_the_rerank_reads_as_many_candidates_as_the_file_gives_the_strategy(tmp_path, embedder):
    """``rerank.n_candidates`` unset: each strategy's count from the weights file's
    ``candidates`` map, else 30; set, it wins for every strategy. A caller that fetches before
    the strategy is known asks for the most any strategy reranks."""
    fitted = {"default": None, "candidates": {"entity": 3, "wide": 45}}
    path = tmp_path / "weights.json"
    path.write_text(json.dumps(fitted), encoding="utf-8")
    settings = Settings(rerank={"weights_file": str(path)}).with_tuning(
        rerank={"section_context": False, "chain_pair": False}  # no graph here to read links
    )
    assert candidates_for("entity", settings) == 3
    assert candidates_for("hybrid", settings) == candidates_for(None, settings) == 30
    assert most_candidates(settings) == 45
    forced = Settings(rerank={"weights_file": str(path)}).with_tuning(rerank={"n_candidates": 7})
    assert candidates_for("entity", forced) == candidates_for("hybrid", forced) == 7
    assert most_candidates(forced) == 7

    texts = ["Gradients were clipped."] * 3 + ["We report results on the Penn Treebank."]
    items = [RetrievedItem(id=str(i), text=t, score=1.0 - i / 10) for i, t in enumerate(texts)]
    ctx = SimpleNamespace(settings=settings, embedder=embedder)
    question = "Which treebank do they report results on?"
    # entity reranks its first 3 only: the answer, fourth, keeps its place; hybrid reads it
    assert late_rerank(question, items, ctx, "entity")[-1].id == "3"
    assert late_rerank(question, items, ctx, "hybrid")[0].id == "3"


def test_a_bad_candidate_count_is_a_config_error(tmp_path):
    path = tmp_path / "weights.json"
    path.write_text(json.dumps({"default": None, "candidates": {"entity": 0}}), encoding="utf-8")
    with pytest.raises(ConfigError, match="not a positive integer") as err:
        candidates_for("entity", Settings(rerank={"weights_file": str(path)}))
    assert "n_candidates" in (err.value.hint or "")


def test_the_shipped_file_rerank_fewer_of_the_entity_walks_candidates():
    """The walk's rank counts in ``entity``'s rerank, so reading fewer of its candidates costs
    it no recall and saves embedding their word pieces (the file's ``candidates_fit``); every
    other strategy reranks the default 30."""
    data = load_weights()
    assert set(data["candidates"]) == {"entity"}
    assert candidates_for("entity", Settings()) == data["candidates"]["entity"] < DEFAULT_CANDIDATES
    assert candidates_for("hybrid", Settings()) == DEFAULT_CANDIDATES == 30
    assert most_candidates(Settings()) == 30
    assert data["candidates_fit"]["record"]
