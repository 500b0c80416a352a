"""The chain rerank's pure parts: which candidates link, and how a link lifts a second hop."""

from __future__ import annotations

import numpy as np
import pytest

from kg_platform.errors import ConfigError
from kg_platform_lab.rerank.chain_rerank import (
    Candidate,
    ChainWeights,
    chain_order,
    chain_scores,
    parse_weights,
    link_matrices,
    names,
)


def test_a_title_is_named_as_whole_words_without_its_qualifier():
    assert names("Paris (film)", "She starred in Paris, a 1926 comedy.")
    assert not names("Paris", "the Parisian press")  # not inside another word
    assert not names("Ur", "Ur was a city")  # too short to link by
    assert not names("", "anything")


def test_links_by_title_and_by_an_entity_the_question_does_not_name():
    question = "Where was the director of Jaws born?"
    cands = [
        Candidate(
            "a",
            "Jaws is a 1975 film directed by Steven Spielberg.",
            "Jaws",
            ("jaws", "steven spielberg"),
        ),
        Candidate("b", "Spielberg was born in Cincinnati.", "Steven Spielberg", ("cincinnati",)),
        Candidate("c", "Jaws 2 is a sequel.", "Jaws 2", ("jaws",)),
        Candidate("d", "He grew up with Steven Spielberg.", "Someone", ("steven spielberg",)),
        Candidate("e", "Another chunk of Jaws.", "Jaws", ("jaws", "steven spielberg")),
    ]
    title, entity = link_matrices(question, cands)
    assert title[0, 1] == title[1, 0] == 1.0  # a names b's title
    assert title[0, 3] == 0.0 and title[1, 3] == 1.0  # d names b's title
    assert entity[0, 3] == 1.0  # a shared entity the question does not name
    assert entity[0, 2] == 0.0  # "jaws" is named by the question: no bridge
    assert title[0, 4] == entity[0, 4] == 0.0  # two chunks of one source do not link
    assert not title.diagonal().any() and not entity.diagonal().any()


def test_a_linked_candidate_overtakes_an_unlinked_one_only_with_weight():
    late = np.asarray([2.0, 1.0, 1.2, 0.0])  # 0 is the anchor; 1 is linked to it, 2 is not
    title = np.zeros((4, 4))
    title[0, 1] = title[1, 0] = 1.0
    entity = np.zeros((4, 4))
    assert chain_order(late, title, entity, ChainWeights()) == [0, 2, 1, 3]
    assert chain_order(late, title, entity, ChainWeights(title=0.5)) == [0, 1, 2, 3]
    scores = chain_scores(late, title, entity, ChainWeights(title=0.5))
    assert scores[0] == pytest.approx(1.0)  # the anchor is not lifted by its own link
    assert scores[1] == pytest.approx(0.5 + 0.5)


def test_more_anchors_lift_the_links_of_the_second_candidate_too():
    late = np.asarray([2.0, 1.9, 1.0, 0.9])
    title = np.zeros((4, 4))
    title[1, 3] = title[3, 1] = 1.0
    entity = np.zeros((4, 4))
    one = chain_order(late, title, entity, ChainWeights(title=0.5, anchors=1))
    two = chain_order(late, title, entity, ChainWeights(title=0.5, anchors=2))
    assert one == [0, 1, 2, 3]
    assert two == [0, 1, 3, 2]


def test_hop_scores_count_per_anchor():
    late = np.asarray([2.0, 1.0, 1.1])
    zero = np.zeros((3, 3))
    hop = np.asarray([[0.0, 2.0, 0.0]])  # one anchor (0): candidate 1 reads best after it
    order = chain_order(late, zero, zero, ChainWeights(hop=0.5), hop=hop, anchors=[0])
    assert order == [0, 1, 2]


def test_weights_are_checked():
    assert parse_weights({"title": 0.5, "anchors": 2}) == ChainWeights(title=0.5, anchors=2)
    assert parse_weights(None) == ChainWeights()
    with pytest.raises(ConfigError, match="unknown chain-rerank weight"):
        parse_weights({"titel": 1.0})
    with pytest.raises(ConfigError, match="at least one anchor"):
        parse_weights({"title": 1.0, "anchors": 0})
