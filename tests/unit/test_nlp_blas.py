"""The NLP extractor's pipeline multiplies with numpy's BLAS, not thinc's blis (three times
slower on our CI machine), and parses exactly as the pipeline on blis does. Real spaCy pipeline."""

from __future__ import annotations

import pytest

from kg_platform.distilling.nlp import DEFAULT_MODEL, load_pipeline, nlp_available

pytestmark = pytest.mark.skipif(
    not nlp_available(DEFAULT_MODEL), reason="spaCy and its English pipeline are not installed"
)

TEXTS = [
    "Sweetgrass is a documentary film directed by Lucien Castaing-Taylor and Ilisa Barbash. "
    "It follows the sheepherders who drive their flocks into Montana's Absaroka-Beartooth "
    "Mountains.",
    "The Battle of Hastings was fought on 14 October 1066 between the Norman-French army of "
    "William, the Duke of Normandy, and an English army under King Harold Godwinson.",
]


def test_every_model_in_the_pipeline_uses_numpy_blas() -> None:
    nlp = load_pipeline(DEFAULT_MODEL)
    for name, pipe in nlp.pipeline:
        model = getattr(pipe, "model", None)
        if model is not None and hasattr(model, "ops"):
            assert getattr(model.ops, "use_blis", False) is False, name


def test_it_parses_as_the_pipeline_on_blis_does() -> None:
    import spacy

    on_blis = spacy.load(DEFAULT_MODEL, exclude=["senter", "lemmatizer"])
    ours = load_pipeline(DEFAULT_MODEL)
    for expected, got in zip(on_blis.pipe(TEXTS), ours.pipe(TEXTS)):
        assert [(e.text, e.label_) for e in got.ents] == [(e.text, e.label_) for e in expected.ents]
        assert [(t.tag_, t.dep_, t.head.i) for t in got] == [
            (t.tag_, t.dep_, t.head.i) for t in expected
        ]
