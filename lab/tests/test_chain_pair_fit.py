"""The chain-pair study's fit (the lab side; the features are the product's)."""

from __future__ import annotations

import numpy as np

from kg_platform_lab.rerank.chain_pair import feature_names, fit, logits


def column(name: str) -> int:
    return feature_names().index(name)


def test_fitted_model_ranks_a_linked_gold_candidate_over_an_unlinked_one():
    rng = np.random.default_rng(0)
    x = rng.random((200, len(feature_names())))
    y = (x[:, column("title_a0")] > 0.5).astype(float)
    model = fit(x, y)
    assert model["features"] == feature_names()
    a, b = x[:1].copy(), x[:1].copy()
    a[0, column("title_a0")], b[0, column("title_a0")] = 1.0, 0.0
    assert logits(model, a)[0] > logits(model, b)[0]
