"""SAGE gradient selection (spec §3.3) on hand-made scores, including the paper's worked example."""

from __future__ import annotations

import itertools

from types import SimpleNamespace

import numpy as np
import pytest

from kg_platform.config import Settings
from kg_platform.errors import ConfigError, RetrievalError
from kg_platform.retrieval.base import RetrievedItem
from kg_platform.retrieval.rerank.selection import apply_selection, gradient_cut

PAPER = [13.79, 13.58, 11.91, 11.55, 10.94, 7.815, 7.665, 5.49, 4.416, 1.304, 1.2, 1.1]


def test_paper_worked_example_keeps_nine():
    # min_k = 7; 5.49 >= 0.3*7.665 and 4.416 >= 0.3*5.49 kept; 1.304 < 0.3*4.416 stops.
    assert gradient_cut(PAPER, min_k=7, g=0.3) == 9


def test_min_k_is_always_kept_even_after_a_cliff():
    assert gradient_cut([10.0, 0.1, 0.05], min_k=2, g=0.3) == 3
    assert gradient_cut([10.0, 0.1, 0.01], min_k=2, g=0.3) == 2


def test_fewer_scores_than_min_k():
    assert gradient_cut([3.0, 2.0], min_k=7, g=0.3) == 2
    assert gradient_cut([], min_k=7, g=0.3) == 0


def test_flat_scores_keep_everything_and_steep_g_cuts_early():
    assert gradient_cut([1.0] * 10, min_k=1, g=0.3) == 10
    assert gradient_cut([1.0, 0.9, 0.8], min_k=1, g=0.95) == 1


def test_invalid_parameters_raise_config_errors():
    with pytest.raises(ConfigError):
        gradient_cut([1.0], min_k=0, g=0.3)
    with pytest.raises(ConfigError):
        gradient_cut([1.0], min_k=1, g=3.3)  # the misprinted 1/g reading


_FAKE_IDS = itertools.count()


class _FakeEmbedder:
    """Deterministic unit vectors: the query is e0; item i is cos_i along e0."""

    def __init__(self, cosines: dict[str, float]):
        self.cosines = cosines
        # the rerank cache is keyed by model name: unique per instance (an id() is reused once
        # an earlier fake is garbage-collected, and its cached vectors would then be "found")
        self.model_name = f"fake-{next(_FAKE_IDS)}"
        self.embedded: list[str] = []

    def embed(self, texts):
        self.embedded.extend(texts)
        out = []
        for t in texts:
            c = self.cosines.get(t, 1.0)
            out.append([c, float(np.sqrt(max(0.0, 1 - c * c)))])
        return np.asarray(out, dtype=np.float32)


def test_apply_selection_reranks_and_cuts():
    cos = {"a": 0.2, "b": 0.9, "c": 0.8, "d": 0.1}
    settings = Settings().with_tuning(sage={"min_k": 1, "gradient": 0.5, "n_candidates": 20})
    ctx = SimpleNamespace(settings=settings, embedder=_FakeEmbedder(cos))
    items = [RetrievedItem(id=t, text=t, score=1.0 - i / 10) for i, t in enumerate("abcd")]
    out = apply_selection("sage", "query", items, ctx)
    # reranked b (0.9), c (0.8), a (0.2 < 0.5*0.8 stops)
    assert [it.id for it in out] == ["b", "c"]
    assert out[0].breakdown["retrieval_score"] == pytest.approx(0.9)
    assert out[0].score == pytest.approx(0.9, abs=1e-5)
    assert apply_selection("none", "query", items, ctx) is items
    with pytest.raises(RetrievalError):
        apply_selection("bogus", "query", items, ctx)


def test_rerank_embeds_each_text_once_per_process():
    """The cosine reranker reuses vectors: a second pass over the same candidates embeds nothing."""
    cos = {"a": 0.2, "b": 0.9, "c": 0.8, "d": 0.1}
    embedder = _FakeEmbedder(cos)
    ctx = SimpleNamespace(
        settings=Settings().with_tuning(sage={"min_k": 1, "gradient": 0.5}), embedder=embedder
    )
    items = [RetrievedItem(id=t, text=t, score=1.0) for t in "abc"]
    first = apply_selection("sage", "query", items, ctx)
    assert sorted(embedder.embedded) == ["a", "b", "c", "query"]
    again = apply_selection(
        "sage", "query", items + [RetrievedItem(id="d", text="d", score=0.1)], ctx
    )
    assert sorted(embedder.embedded) == ["a", "b", "c", "d", "query"]  # only the new text
    assert [it.id for it in again][:2] == [it.id for it in first][:2] == ["b", "c"]


def test_sage_scorer_follows_the_setting_and_what_the_embedder_exposes(embedder):
    from kg_platform.retrieval.rerank.selection import DEFAULT_GRADIENT, sage_gradient, sage_scorer

    def scorer(embedder_, cross_encoder=None, **tuned):
        settings = Settings(sage={"cross_encoder": cross_encoder}).with_tuning(sage=tuned)
        return sage_scorer(SimpleNamespace(settings=settings, embedder=embedder_))

    assert scorer(embedder) == "late"  # the bundled model exposes word-piece states
    assert scorer(_FakeEmbedder({})) == "embedder-cosine"  # vectors only: cosine
    assert scorer(embedder, scorer="cosine") == "embedder-cosine"
    assert scorer(embedder, cross_encoder="/models/ce") == "cross-encoder"
    # g: the calibrated value per scorer unless set
    assert sage_gradient(Settings(), "late") == DEFAULT_GRADIENT["late"]
    assert sage_gradient(Settings(), "cross-encoder") == 0.3  # the paper's, for probabilities
    assert sage_gradient(Settings().with_tuning(sage={"gradient": 0.42}), "late") == 0.42
    assert sage_gradient(Settings(), "none") == 0.3  # no candidates: any g, nothing to cut


def test_auto_selection_is_the_late_rerank_only_where_the_embedder_can_run_it(embedder):
    from kg_platform.retrieval.rerank.selection import candidates_needed, resolve_selection

    def ctx(embedder_):
        return SimpleNamespace(settings=Settings(), embedder=embedder_)

    assert Settings().retrieve.select == "auto"  # the default of every front door
    assert resolve_selection("auto", ctx(embedder)) == "late"  # bundled: word-piece states
    assert resolve_selection("auto", ctx(_FakeEmbedder({}))) == "none"  # vectors only
    assert resolve_selection("sage", ctx(_FakeEmbedder({}))) == "sage"  # named ones are kept
    assert resolve_selection(None, ctx(embedder)) == "none"
    with pytest.raises(RetrievalError, match="unknown selection"):
        resolve_selection("rerank", ctx(embedder))
    # auto fetches the rerank's candidates when it reranks, only k when it does not
    # the most any strategy reranks: the strategy is not known before ``auto`` chooses
    assert candidates_needed("auto", 5, ctx(embedder)) == 30
    assert candidates_needed("auto", 5, ctx(_FakeEmbedder({}))) == 5
    items = [RetrievedItem(id=str(i), text=t, score=1.0) for i, t in enumerate("ab")]
    assert apply_selection("auto", "q", items, ctx(_FakeEmbedder({}))) == items


def test_sage_with_the_late_scorer_cuts_after_the_relevant_texts(embedder):
    """The late score is min-max scaled over the candidates (0 for the worst), so the ratio
    test at the calibrated g keeps the two passages about the question and cuts the rest."""
    question = "Which optimizer and learning rate were used to train the model?"
    texts = [
        "We trained the model with the Adam optimizer at a learning rate of 0.001.",
        "The model was optimised with Adam; the learning rate was 3e-4, halved every epoch.",
        "The city council approved the new bus routes on Tuesday.",
        "Penguins live mostly in the Southern Hemisphere.",
        "The museum's collection includes Roman coins and medieval maps.",
    ]
    settings = Settings().with_tuning(
        sage={"min_k": 1, "n_candidates": 20}, rerank={"section_context": False}
    )
    ctx = SimpleNamespace(settings=settings, embedder=embedder)
    items = [RetrievedItem(id=str(i), text=t, score=0.5) for i, t in enumerate(reversed(texts))]
    out = apply_selection("sage", question, items, ctx)
    assert sorted(it.text for it in out) == sorted(texts[:2])
    assert all("sage_late" in it.breakdown for it in out)
