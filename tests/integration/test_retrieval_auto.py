"""``auto``, the default strategy: ``propagate`` over long documents, ``mogg`` over pools of
short passages (``entity`` where the corpus has the distilled layer and the question names one
of its entities), decided by the scope's level-2 chunks per source, the corpus's entities and
the question's, against the real Neo4j."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kg_platform.retrieval.strategies import auto
from kg_platform.retrieval.base import get_strategy
from kg_platform.sdk import KnowledgePlatform
from tests.support.passages import ENTITY_PASSAGES, ingest_passages, with_nlp_layer

pytestmark = pytest.mark.integration

DOCS = "auto-docs"
PASSAGES = "auto-passages"
WITH_ENTITIES = "auto-entities"
SAMPLES = Path(__file__).resolve().parents[2] / "ingestion" / "samples"
QUESTION = "What file formats can MarkItDown convert to Markdown?"


def test_choose_reads_chunks_per_source():
    assert auto.choose(sources=1, chunks=30) == "propagate"  # one paper
    assert auto.choose(sources=800, chunks=820) == "mogg"  # a pool of paragraphs
    assert auto.choose(sources=2, chunks=8) == "propagate"  # the threshold itself
    assert auto.choose(sources=0, chunks=0) == "propagate"  # nothing yet: the general choice
    assert auto.choose(sources=800, chunks=820, entities=True) == "entity"
    assert auto.choose(sources=1, chunks=30, entities=True) == "propagate"


@pytest.fixture(scope="module")
def kp(graph_session, settings, embedder, tmp_path_factory):
    platform = KnowledgePlatform(settings, graph=graph_session, embedder=embedder)
    report = platform.ingest([SAMPLES], corpus=DOCS)
    assert report.status == "completed", report.summary()
    lines = [
        "MarkItDown converts PowerPoint, Word and Excel files to Markdown.",
        "IBM is headquartered in Armonk, New York.",
        "Ducks feed on plants, insects and small fish.",
        "The Penn Treebank is a corpus of parsed English sentences.",
    ]
    ingest_passages(platform, tmp_path_factory.mktemp("passages"), PASSAGES, lines)
    return platform


@pytest.fixture(scope="module")
def kp_entities(kp, graph_session, settings, embedder, tmp_path_factory):
    """The same kind of passages, ingested with the NLP distilled layer."""
    pytest.importorskip("spacy", reason="needs the nlp extra")
    platform = KnowledgePlatform(with_nlp_layer(settings), graph=graph_session, embedder=embedder)
    folder = tmp_path_factory.mktemp("passages-entities")
    ingest_passages(platform, folder, WITH_ENTITIES, ENTITY_PASSAGES)
    return platform


def test_auto_is_propagate_over_documents_and_mogg_over_passages(kp) -> None:
    for corpus, expected in ((DOCS, "propagate"), (PASSAGES, "mogg")):
        ctx = kp.retrieval_context(corpus)
        strategy = get_strategy("auto", ctx)
        items = strategy.retrieve(QUESTION, 5)
        assert strategy.chosen == expected
        direct = get_strategy(expected, kp.retrieval_context(corpus)).retrieve(QUESTION, 5)
        assert [it.id for it in items] == [it.id for it in direct]
        assert [it.score for it in items] == [it.score for it in direct]


def test_a_document_scope_inside_a_passage_sized_corpus_is_judged_on_its_own(kp) -> None:
    """The choice is per scope: one long document scoped out of the samples is a document."""
    ctx = kp.retrieval_context(DOCS, scope=["MarkItDown"])
    strategy = get_strategy("auto", ctx)
    items = strategy.retrieve(QUESTION, 3)
    assert strategy.chosen == "propagate" and items
    assert {it.source_id for it in items} == set(ctx.sources or [])


def test_the_default_path_is_auto_with_the_late_rerank(kp) -> None:
    """What a user gets with no flags: ``auto`` + the late rerank, through the one pipeline."""
    assert kp.settings.retrieve.strategy == "auto" and kp.settings.retrieve.select == "auto"
    res = kp.search(QUESTION, corpus=DOCS, k=3)
    assert res.strategy == "auto" and res.select == "late"
    assert all("late_maxsim" in it.breakdown for it in res.items)
    assert any("PowerPoint" in it.text for it in res.items)
    assert json.dumps([it.to_dict() for it in res.items])  # serialisable as the API returns it


def test_when_the_chosen_strategy_finds_nothing_hybrid_answers(kp, monkeypatch) -> None:
    ctx = kp.retrieval_context(PASSAGES)
    strategy = get_strategy("auto", ctx)
    mogg = get_strategy("mogg", ctx)
    monkeypatch.setattr(mogg, "retrieve", lambda query, k: [])
    strategy._runners["mogg"] = mogg  # a mogg that finds nothing, as on a graph without pieces
    items = strategy.retrieve(QUESTION, 3)
    assert strategy.chosen == "hybrid" and items
    direct = get_strategy("hybrid", kp.retrieval_context(PASSAGES)).retrieve(QUESTION, 3)
    assert [it.id for it in items] == [it.id for it in direct]


def test_auto_walks_the_entities_of_a_passage_corpus_with_the_layer_and_reranks_as_entity(
    kp_entities, monkeypatch
) -> None:
    """Where the corpus has the distilled layer, passages go to ``entity``, and the late rerank
    then uses ``entity``'s weights (its walk's rank), not the unfitted rule ``auto`` would get."""
    import kg_platform.retrieval.rerank.weights as rw

    question = "Where was the director of Sweetgrass born?"
    ctx = kp_entities.retrieval_context(WITH_ENTITIES)
    strategy = get_strategy("auto", ctx)
    items = strategy.retrieve(question, 3)
    assert strategy.chosen == "entity" and items
    asked: list[str | None] = []
    real = rw.weights_for
    monkeypatch.setattr(rw, "weights_for", lambda s, settings: asked.append(s) or real(s, settings))
    res = kp_entities.search(question, corpus=WITH_ENTITIES, k=3)
    assert res.strategy == "auto" and res.select == "late" and asked == ["entity"]
    direct = kp_entities.search(question, corpus=WITH_ENTITIES, k=3, strategy="entity")
    assert [it.id for it in res.items] == [it.id for it in direct.items]
    # a source scope is judged without the layer: entity has no document scope
    scoped = get_strategy("auto", kp_entities.retrieval_context(WITH_ENTITIES, scope=["p1.txt"]))
    scoped.retrieve(question, 3)
    assert scoped.chosen == "mogg"


def test_a_question_naming_no_entity_of_the_corpus_goes_to_mogg(kp_entities) -> None:
    """The walk draws its reach from the named entities it starts at; from common noun phrases
    alone it spreads over every paragraph that uses them, so ``auto`` sends such a question to
    ``mogg``, and the rerank then uses ``mogg``'s weights."""
    ctx = kp_entities.retrieval_context(WITH_ENTITIES)
    walker = get_strategy("entity", ctx)
    question = "What do small animals feed on?"
    _, seeds = walker.seeds(question)
    assert not any(seed["named"] for seed in seeds)  # at most common nouns ("fish", "plants")
    strategy = get_strategy("auto", ctx)
    items = strategy.retrieve(question, 3)
    assert strategy.chosen == "mogg" and items
    named = "Where did Lucien Castaing-Taylor teach?"
    assert any(seed["named"] for seed in walker.seeds(named)[1])
    strategy.retrieve(named, 3)
    assert strategy.chosen == "entity"
    # what a user sees: the strategy auto chose and why, on the result and in its JSON
    res = kp_entities.search(question, corpus=WITH_ENTITIES, k=3)
    assert (res.strategy, res.ran) == ("auto", "mogg")
    assert res.why == "the question names no entity of the corpus"
    res = kp_entities.search(named, corpus=WITH_ENTITIES, k=3)
    assert res.to_dict()["ran"] == "entity" and "Lucien Castaing-Taylor" in (res.why or "")


def _maxsims(
    kp: KnowledgePlatform, corpus: str, query_head: str | None, quantize: str | None = None
) -> dict[str, float]:
    """Each returned item's MaxSim under the default path, with ``rerank.query_head`` and
    ``rerank.quantize`` as shipped (``None``) or forced."""
    settings = kp.settings
    if query_head is not None:
        rerank = settings.rerank.model_copy(update={"query_head": query_head})
        settings = settings.model_copy(update={"rerank": rerank})
    if quantize is not None:  # kg_platform.tuning rerank.quantize
        settings = settings.with_tuning(rerank={"quantize": quantize})
    platform = KnowledgePlatform(settings, graph=kp.graph, embedder=kp.embedder)
    res = platform.search(QUESTION, corpus=corpus, k=4)
    assert res.select == "late" and res.items
    return {it.id: it.breakdown["late_maxsim"] for it in res.items}


def test_the_default_rerank_reads_the_question_through_the_trained_head_over_documents_only(
    kp,
) -> None:
    """The shipped query head (kg_platform/models/rerank/query-head.onnx) is part of what a
    user gets with no flags, over long documents; over short passages the rerank is the
    untrained one (the head was measured not to help there)."""
    shipped, on, off = (_maxsims(kp, DOCS, mode) for mode in (None, "on", "off"))
    assert shipped == on
    common = set(shipped) & set(off)
    assert common and any(abs(shipped[i] - off[i]) > 1e-4 for i in common)
    passages, passages_on, passages_off = (
        _maxsims(kp, PASSAGES, mode) for mode in (None, "on", "off")
    )
    assert passages == passages_off
    common = set(passages) & set(passages_on)
    assert common and any(abs(passages[i] - passages_on[i]) > 1e-4 for i in common)


def test_the_default_rerank_reads_candidates_with_int8_and_documents_questions_with_fp32(
    kp,
) -> None:
    """``rerank.quantize = auto`` as a user gets it: the candidates' word pieces come from the
    int8 copy of the bundled model (about half the CPU); over short passages the question's
    too, and inside long documents the question is read by the model as configured, the copy
    the query head was trained on (read by int8, the head lost recall)."""
    if getattr(kp.embedder, "quantize", None) != "none":
        pytest.skip("the test embedder is not the fp32 ONNX model the int8 copy derives from")
    assert kp.settings.tuning.rerank.quantize == "auto"
    docs, docs_fp32, docs_int8 = (_maxsims(kp, DOCS, None, q) for q in (None, "none", "int8"))
    common = set(docs) & set(docs_fp32) & set(docs_int8)
    assert common
    # one copy for both sides, either one, is not what documents get
    assert any(abs(docs[i] - docs_fp32[i]) > 1e-5 for i in common)
    assert any(abs(docs[i] - docs_int8[i]) > 1e-5 for i in common)
    passages, passages_int8, passages_fp32 = (
        _maxsims(kp, PASSAGES, None, q) for q in (None, "int8", "none")
    )
    assert passages == passages_int8
    common = set(passages) & set(passages_fp32)
    assert common and any(abs(passages[i] - passages_fp32[i]) > 1e-5 for i in common)


def _late_reranked(kp: KnowledgePlatform, corpus: str, structure: str | None = None):
    """``hybrid``'s candidates for :data:`QUESTION` and the late rerank of them, with
    ``rerank.structure`` as shipped (``None``) or forced, and without the chain-pair stage that
    follows it over passages (tests/integration/test_chain_pair_graph.py covers that one)."""
    from kg_platform.retrieval.rerank.selection import late_rerank

    settings = kp.settings.with_tuning(rerank={"chain_pair": False})
    if structure is not None:
        rerank = settings.rerank.model_copy(update={"structure": structure})
        settings = settings.model_copy(update={"rerank": rerank})
    platform = KnowledgePlatform(settings, graph=kp.graph, embedder=kp.embedder)
    ctx = platform.retrieval_context(corpus)
    items = get_strategy("hybrid", ctx).retrieve(QUESTION, 30)
    return ctx, items, late_rerank(QUESTION, items, ctx, "hybrid")


def test_the_default_rerank_orders_documents_by_the_shipped_structure_model(kp) -> None:
    """Over long documents the candidates are ordered by the shipped document rerank
    (kg_platform/models/rerank/structure-rerank.weights.json): each score is the model's
    log-odds from the candidate's cosine, MaxSim and place in its document, read from Neo4j;
    over short passages the fixed cosine + MaxSim sum orders them."""
    import numpy as np

    from kg_platform.retrieval.rerank.late_interaction import min_max
    from kg_platform.retrieval.rerank.structure import (
        features,
        load_structure_model,
        structure_scores,
    )

    ctx, items, out = _late_reranked(kp, DOCS)
    assert len(items) > 2
    by_id = {it.id: it for it in out}
    ids = [it.id for it in items if "late_cosine" in by_id[it.id].breakdown]
    cos = np.array([by_id[i].breakdown["late_cosine"] for i in ids])
    sim = np.array([by_id[i].breakdown["late_maxsim"] for i in ids])
    expected = structure_scores(load_structure_model(), cos, sim, ids, ctx)
    probability = 1.0 / (1.0 + np.exp(-expected))  # what each item's score shows
    assert [by_id[i].score for i in ids] == pytest.approx(list(probability))
    assert [by_id[i].breakdown["evidence_probability"] for i in ids] == pytest.approx(
        list(probability)
    )
    ranked = sorted(range(len(ids)), key=lambda j: (-round(float(expected[j]), 9), j))
    assert [it.id for it in out[: len(ids)]] == [ids[j] for j in ranked]
    # the places are read: the same scores without them differ
    unplaced = load_structure_model().scores(features(cos, sim, [None] * len(ids)))
    assert not np.allclose(expected, unplaced)
    _, _, fixed = _late_reranked(kp, DOCS, "off")
    fixed_by_id = {it.id: it for it in fixed}
    assert [fixed_by_id[i].score for i in ids] == pytest.approx(list(min_max(cos) + min_max(sim)))
    _, p_items, passages = _late_reranked(kp, PASSAGES)
    p_by_id = {it.id: it for it in passages}
    p_cos = np.array([p_by_id[it.id].breakdown["late_cosine"] for it in p_items])
    p_sim = np.array([p_by_id[it.id].breakdown["late_maxsim"] for it in p_items])
    assert [p_by_id[it.id].score for it in p_items] == pytest.approx(
        list(min_max(p_cos) + min_max(p_sim))
    )


class CountingGraph:
    """The real graph, with the names of the statements read through it."""

    def __init__(self, graph) -> None:
        self._graph = graph
        self.reads: list[str] = []

    def read(self, name, **params):
        self.reads.append(name)
        return self._graph.read(name, **params)

    def __getattr__(self, attr):
        return getattr(self._graph, attr)


def test_the_scope_step_reads_the_shape_once_for_the_strategy_and_the_rerank(kp) -> None:
    """``auto``'s choice, the query head and the document rerank all take the shape from the
    context the scope step opened: one read of it, however many questions that context serves."""
    from kg_platform.retrieval.pipeline import open_context, retrieve

    counting = CountingGraph(kp.graph)
    ctx = open_context(counting, kp.embedder, kp.settings, DOCS)  # type: ignore[arg-type]
    for question in (QUESTION, "Which file formats does MarkItDown read?"):
        result = retrieve(ctx, question, strategy="auto", k=3, select="late")
        assert result.ran == "propagate" and result.items
    assert counting.reads.count("retrieval/scope_shape_corpus") == 1
    assert ctx.shape().holds_documents
    scoped = open_context(counting, kp.embedder, kp.settings, DOCS, scope=["MarkItDown"])
    assert retrieve(scoped, QUESTION, strategy="auto", k=3, select="late").items
    assert counting.reads.count("retrieval/scope_shape_sources") == 1


def test_the_reasoner_retrieves_in_the_context_the_caller_opened(kp) -> None:
    """``ask`` hands the context its scope step opened to the reasoner, which retrieves in it
    (and opens one of its own, kept for the question, only for another corpus or scope)."""
    from kg_platform.reasoning import Reasoner

    ctx = kp.retrieval_context(DOCS, scope=["MarkItDown"])
    reasoner = Reasoner(
        graph=kp.graph,
        embedder=kp.embedder,
        settings=kp.settings,
        sources=ctx.sources,
        context=ctx,
    )
    assert reasoner._context(DOCS) is ctx
    other = reasoner._context(PASSAGES)
    assert other is not ctx and other.corpus == PASSAGES and reasoner._context(PASSAGES) is other
