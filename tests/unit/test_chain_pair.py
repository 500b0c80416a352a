"""The chain-pair score's features and shipped model (pure logic: no graph, no embedder)."""

from __future__ import annotations

import numpy as np

from kg_platform.retrieval.rerank.chain_pair import (
    feature_names,
    chain_features,
    link_matrices,
    load_chain_pair_model,
    logits,
)

QUESTION = "Where was the director of Jaws born?"
ITEMS = [
    {
        "id": "anchor",
        "text": "Jaws is a 1975 thriller film directed by Steven Spielberg.",
        "title": "Jaws (film)",
        "entities": ["steven spielberg"],
        "source": "s-anchor",
        "refs": ["s-bridge"],
    },
    {
        "id": "distractor",
        "text": "Jeannot Szwarc, the director of a 1978 sequel, was born in Paris.",
        "title": "Jeannot Szwarc",
        "entities": [],
        "source": "s-distractor",
        "refs": [],
    },
    {
        "id": "bridge",
        "text": "He grew up in Cincinnati, Ohio.",
        "title": "Steven Spielberg",
        "entities": ["steven spielberg"],
        "source": "s-bridge",
        "refs": ["s-anchor"],
    },
]


def column(name: str) -> int:
    return feature_names().index(name)


def test_references_link_joins_sources_either_way_and_not_a_source_to_itself():
    items = [dict(ITEMS[0], refs=["s-bridge"]), dict(ITEMS[2], refs=[]), dict(ITEMS[2], id="b2")]
    m = link_matrices(QUESTION, items)[2]
    assert m[0, 1] == m[1, 0] == 1.0
    assert m[0, 2] == 1.0  # the second chunk of the referenced source
    assert m[1, 2] == 0.0  # two chunks of one source are not linked by REFERENCES


def test_features_name_the_links_to_each_anchor():
    late = np.asarray([0.9, 0.8, 0.1])
    hop = np.asarray([[1.0, 0.2, 0.9], [0.0, 1.0, 0.5]])
    x = chain_features(QUESTION, ITEMS, late, hop, anchors=[0, 1])
    assert x.shape == (3, len(feature_names()))
    bridge, distractor, anchor = x[2], x[1], x[0]
    assert anchor[column("is_a0")] == 1.0 and distractor[column("is_a1")] == 1.0
    # the bridge is linked to the first hop by its title, a shared entity and REFERENCES
    assert bridge[column("title_a0")] == 1.0
    assert bridge[column("entity_a0")] == 1.0
    assert bridge[column("refs_a0")] == 1.0
    assert distractor[column("title_a0")] == distractor[column("refs_a0")] == 0.0
    # the hop score against an anchor is 0 on that anchor itself
    assert anchor[column("hop_a0")] == 0.0 and bridge[column("hop_a0")] == 0.9
    # the question names the first hop's title ("Jaws"), not the bridge's
    assert x[0, column("q_names_c")] == 1.0 and bridge[column("q_names_c")] == 0.0
    assert bridge[column("q_names_a0")] == 1.0
    assert bridge[column("comparison")] == 0.0
    assert bridge[column("late")] == 0.0 and anchor[column("late")] == 1.0


def test_comparison_questions_are_marked():
    x = chain_features("Which film came out first, Jaws or Alien?", ITEMS, np.ones(3), None, [0, 1])
    assert (x[:, column("comparison")] == 1.0).all()


def test_shipped_model_matches_the_features_and_prefers_a_linked_second_hop():
    model = load_chain_pair_model()
    assert model["features"] == feature_names()
    late = np.asarray([0.9, 0.8, 0.1])
    hop = np.asarray([[1.0, 0.2, 0.9], [0.0, 1.0, 0.5]])
    linked = chain_features(QUESTION, ITEMS, late, hop, anchors=[0, 1])
    unlinked_items = [dict(ITEMS[0], refs=[]), ITEMS[1], dict(ITEMS[2], refs=[], entities=[])]
    unlinked = chain_features(QUESTION, unlinked_items, late, hop, anchors=[0, 1])
    # the same bridge passage scores higher when REFERENCES and an entity join it to the first hop
    assert logits(model, linked)[2] > logits(model, unlinked)[2]


def test_a_model_file_names_the_shape_its_features_have(tmp_path):
    """Three anchors and the two-step link: a candidate two links from the first anchor scores
    the middle candidate's late score; a model whose features do not match its shape is refused
    with a hint."""
    import json

    import pytest

    from kg_platform.errors import ConfigError
    from kg_platform.retrieval.rerank.chain_pair import ChainShape

    shape = ChainShape(anchors=3, hop=False, two_step=True)
    names = feature_names(shape)
    assert "hop_a0" not in names and {"two_step_a0", "is_a2", "refs_a2"} <= set(names)
    third = {
        "id": "third",
        "text": "Cincinnati is a city on the Ohio River.",
        "title": "Cincinnati",
        "entities": [],
        "source": "s-third",
        "refs": [],
    }
    items = [*ITEMS, third]  # anchor -> bridge (entity, title, refs) -> third (title "Cincinnati")
    late = np.asarray([0.9, 0.8, 0.5, 0.1])
    x = chain_features(QUESTION, items, late, None, [0, 1, 2], shape)
    assert x.shape == (4, len(names))
    two = names.index("two_step_a0")
    bridge_late = (0.5 - 0.1) / (0.9 - 0.1)  # min-max
    assert x[3, two] == pytest.approx(bridge_late)  # the third hop, through the bridge
    assert x[0, two] == 0.0  # never the anchor itself
    assert x[3, names.index("title_a0")] == 0.0  # not linked to the anchor directly

    path = tmp_path / "model.json"
    model = {"shape": shape.as_dict(), "features": names, "mean": [0.0] * len(names)}
    model |= {"scale": [1.0] * len(names), "coef": [0.0] * len(names), "intercept": 0.0}
    path.write_text(json.dumps(model))
    assert ChainShape.of(load_chain_pair_model(path)) == shape
    other = tmp_path / "mismatched.json"  # (the loader caches by path)
    other.write_text(json.dumps({**model, "shape": {"anchors": 2}}))
    with pytest.raises(ConfigError, match="other features"):
        load_chain_pair_model(other)
    # the shipped file predates shapes: it is the first shape
    assert ChainShape.of(load_chain_pair_model()) == ChainShape()
