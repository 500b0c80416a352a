"""Router soft labels, loss and training (spec §1.6), on hand-made numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kg_platform.config import Settings
from kg_platform.retrieval.strategies.mog import choose_level
from tests.support.reference import normalise_scores
from kg_platform_lab.routers.training import (
    bce_sum,
    bce_sum_torch,
    hitrate,
    label_text,
    soft_labels,
    train_mlp,
)
from kg_platform_lab.settings import RouterTrainingSettings


def test_soft_labels_reproduce_the_spec_examples():
    assert soft_labels([0, 0.32, 0.11, 0.88, 0.45]).tolist() == pytest.approx([0, 0, 0, 0.8, 0.2])
    assert soft_labels([0.95, 0.07, 0.22, 0.11, 0.19]).tolist() == pytest.approx(
        [0.8, 0, 0.2, 0, 0]
    )


def test_soft_labels_ties_and_alternative_split():
    assert soft_labels([0.5, 0.5, 0.1]).tolist() == pytest.approx([0.8, 0.2, 0])
    assert soft_labels([0.1, 0.9], best=0.7, second=0.3).tolist() == pytest.approx([0.3, 0.7])


def test_summed_bce_matches_the_formula_and_torch():
    import torch

    w = np.array([0.1, 0.2, 0.3, 0.7, 0.4])
    sl = np.array([0, 0, 0, 0.8, 0.2])
    by_hand = sum(-(s * math.log(x) + (1 - s) * math.log(1 - x)) for x, s in zip(w, sl))
    assert bce_sum(w, sl) == pytest.approx(by_hand)
    t = bce_sum_torch(
        torch.tensor(np.array([w]), dtype=torch.float64),
        torch.tensor(np.array([sl]), dtype=torch.float64),
    )
    assert float(t) == pytest.approx(by_hand)
    # the loss is smallest at w = sl
    assert bce_sum(sl.clip(1e-7, 1 - 1e-7), sl) < bce_sum(w, sl)


def test_eq2_ignores_weights_below_the_zero_threshold():
    assert choose_level([0.01, 0.3, 0.6, 0.02], 0.05) == 3
    assert choose_level([0.01, 0.02], 0.05) == 2  # all "zero": plain argmax


def test_label_text_prefers_gold_sentences():
    row = {
        "question": "Q?",
        "answer": "A",
        "supporting_facts": [["T", 1]],
        "paragraphs": [{"idx": 0, "title": "T", "sentences": ["s0", " s1"], "is_supporting": True}],
    }
    assert label_text(row) == "s1"
    assert label_text({"question": "Q?", "answer": "A"}) == "Q? A"
    assert hitrate("the cat sat", "A cat sat down") == pytest.approx(2 / 3)


def test_normalisation_modes():
    assert normalise_scores([4.0, 2.0, 3.0], "minmax") == [1.0, 0.0, 0.5]
    assert normalise_scores([4.0, 2.0], "max") == [1.0, 0.5]
    assert normalise_scores([2.0], "minmax") == [1.0]


def test_training_learns_a_separable_routing_and_stops_early():
    rng = np.random.default_rng(0)
    n, d = 160, 16
    X = rng.normal(size=(n, d)).astype(np.float32)
    best = (X[:, 0] > 0).astype(int) * 2  # level 1 or level 3 depending on one feature
    Y = np.zeros((n, 4), dtype=np.float32)
    Y[np.arange(n), best] = 0.8
    Y[np.arange(n), 1] = np.where(best == 0, 0.2, 0.2)
    training = RouterTrainingSettings(max_epochs=400, patience=20, hidden=32)
    result = train_mlp(X, Y, training)
    m = result.metrics
    assert m["val_top1"] >= 0.8  # chance is 0.5
    assert m["epochs"] <= 400 and m["best_epoch"] <= m["epochs"]
    assert m["n_train"] + m["n_val"] == n


def test_numpy_router_makes_the_torch_routers_decisions(tmp_path):
    """Retrieval loads the trained weights without torch and picks the same levels."""
    import json

    import torch

    from kg_platform.retrieval.strategies.router import Router, save_router_state
    from kg_platform_lab.routers.training import build_mlp

    rng = np.random.default_rng(1)
    n, d, levels = 120, 24, 5
    X = rng.normal(size=(n, d)).astype(np.float32)
    Y = np.zeros((n, levels), dtype=np.float32)
    Y[np.arange(n), (X[:, 0] > 0).astype(int) * 3] = 0.8
    Y[np.arange(n), 1] = 0.2
    training = RouterTrainingSettings(max_epochs=60, patience=10, hidden=16)
    state = train_mlp(X, Y, training).state
    model = build_mlp(d, levels, 16, training.dropout)
    model.load_state_dict(state)
    model.eval()
    with torch.no_grad():
        expected = model(torch.tensor(X)).numpy()
    save_router_state(state, tmp_path)
    (tmp_path / "meta.json").write_text(
        json.dumps({"version": "v", "n_levels": levels, "dim": d, "hidden": 16, "dropout": 0.1})
    )
    router = Router.from_dir(tmp_path)
    got = router.weights_batch(X)
    assert np.abs(got - expected).max() < 1e-5
    assert np.allclose(router.weights(X[7]), expected[7], atol=1e-5)
    zero = Settings().tuning.mog.zero_weight
    assert [choose_level(w, zero) for w in got] == [choose_level(w, zero) for w in expected]
    assert len({choose_level(w, zero) for w in expected}) > 1, (
        "a router that routes everything alike"
    )


def test_router_from_an_older_model_pt_is_converted(tmp_path):
    import json

    import torch

    from kg_platform.retrieval.strategies.router import Router
    from kg_platform_lab.routers.training import build_mlp

    model = build_mlp(8, 3, 4, 0.0)
    torch.save(model.state_dict(), tmp_path / "model.pt")
    (tmp_path / "meta.json").write_text(
        json.dumps({"version": "v", "n_levels": 3, "dim": 8, "hidden": 4, "dropout": 0.0})
    )
    x = np.ones((2, 8), dtype=np.float32)
    with torch.no_grad():
        expected = model(torch.tensor(x)).numpy()
    assert np.allclose(Router.from_dir(tmp_path).weights_batch(x), expected, atol=1e-6)
    assert (tmp_path / "weights.npz").exists()
