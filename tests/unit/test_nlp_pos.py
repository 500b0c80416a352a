"""The attribute ruler's part-of-speech rules applied without its Matcher (``distilling.nlp_pos``)
give every token the part of speech the ruler gives it, on text that exercises its lexical,
dependency and two-token rules. Real spaCy pipeline."""

from __future__ import annotations

import pytest

from kg_platform.distilling.nlp import DEFAULT_MODEL, load_pipeline, nlp_available
from kg_platform.distilling.nlp_pos import COMPONENT, PosRules, UnsupportedRule, install

pytestmark = pytest.mark.skipif(
    not nlp_available(DEFAULT_MODEL), reason="spaCy and its English pipeline are not installed"
)

TEXTS = [
    # subordinators tagged IN (SCONJ), "n't" (PART), auxiliaries (AUX), "that" as a pronoun
    "I didn't know that she had won, because nobody told me that.",
    # expletive "there" + "is" (the two-token rule), "do"/"have" as main verbs
    "There is a film that they have made, and they did it well. There are two of them.",
    # a determiner that is not a det (PRON), "but" as an adverb, a stray space token
    "All of those were directed by Lucien Castaing-Taylor.  He was but a child in 1990.",
    "Sweetgrass is a documentary film directed by Lucien Castaing-Taylor and Ilisa Barbash. "
    "It follows the sheepherders who drive their flocks into Montana's Absaroka-Beartooth "
    "Mountains; they ain't gonna stop.",
]


def test_the_rules_give_every_token_the_ruler_s_part_of_speech():
    import spacy

    ruler = spacy.load(DEFAULT_MODEL, exclude=["senter", "lemmatizer"])
    ours = load_pipeline(DEFAULT_MODEL)
    assert type(ours.get_pipe("attribute_ruler")).__name__ == "PosRules"
    assert ours.get_pipe_meta("attribute_ruler").factory == COMPONENT
    for expected, got in zip(ruler.pipe(TEXTS), ours.pipe(TEXTS)):
        assert [(t.text, t.pos_) for t in got] == [(t.text, t.pos_) for t in expected]
    assert install(ours) is False  # already replaced: nothing to do


def test_a_rule_it_cannot_apply_exactly_keeps_the_ruler():
    with pytest.raises(UnsupportedRule):
        PosRules([{"patterns": [[{"TAG": "NN", "OP": "+"}]], "attrs": {"POS": "NOUN"}}])
    with pytest.raises(UnsupportedRule):
        PosRules([{"patterns": [[{"SHAPE": "Xxxx"}]], "attrs": {"POS": "PROPN"}}])
