"""Late-interaction (MaxSim) rerank: the score on hand-made token states, and the rerank with the
bundled model on texts where mean pooling and MaxSim disagree."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from kg_platform.config import Settings
from kg_platform.errors import ConfigError
from kg_platform.retrieval.base import RetrievalContext, RetrievedItem
from kg_platform.retrieval.rerank.late_interaction import (
    _read_whole,
    content_pieces,
    late_scores,
    maxsim,
    min_max,
    without_shared_head,
)
from kg_platform.retrieval.rerank.selection import apply_selection, candidates_needed, decides_count


def test_maxsim_averages_each_query_tokens_best_match():
    e = np.eye(3, dtype=np.float32)
    query = e[[0, 1]]  # two query tokens
    text = np.stack([e[0], (e[1] + e[2]) / np.sqrt(2)])  # an exact and a half match
    assert maxsim(query, text) == pytest.approx((1.0 + 1 / np.sqrt(2)) / 2)
    assert maxsim(query, text[:0]) == 0.0  # an empty text scores 0, not an error
    # a text holding the query's tokens among noise scores 1; order does not matter
    assert maxsim(query, np.stack([e[2], e[1], e[0]])) == pytest.approx(1.0)


def test_content_pieces_leave_out_stop_words_and_punctuation():
    question = "What datasets do they use to evaluate the model's performance?"
    # the bundled tokenizer's word pieces of the question (special tokens left out)
    spans = [(0, 4), (5, 9), (9, 12), (12, 13), (14, 16), (17, 21), (22, 25), (26, 28), (29, 37)]
    spans += [(38, 41), (42, 47), (47, 48), (48, 49), (50, 61), (61, 62)]
    offsets = np.array(spans)
    kept = [question[a:b] for (a, b), keep in zip(spans, content_pieces(question, offsets)) if keep]
    # "datasets" is three pieces of one content word; "'" and "?" are punctuation
    assert kept == ["data", "set", "s", "use", "evaluate", "model", "s", "performance"]
    # a question of stop words only keeps them all rather than averaging over nothing
    assert content_pieces("Is it?", np.array([(0, 2), (3, 5), (5, 6)])).tolist() == [True] * 3


def test_maxsim_over_content_pieces_stops_function_words_matching_function_words(embedder):
    """A text made of the question's function words out-scores, on all pieces, the text that
    answers; over the content pieces (the default) the answer wins."""
    question = "Which of the languages do they evaluate on?"
    texts = [
        "Which of them they do, and on which of these, is for the others to say.",
        "Experiments cover German, French and Finnish test sets.",
    ]

    def sims(mode: str) -> list[float]:
        # the untrained reading (test_query_head.py covers the trained head)
        tuned = {"section_context": False, "query_stop_words": mode}
        settings = Settings(rerank={"query_head": "off"}).with_tuning(rerank=tuned)
        ctx = SimpleNamespace(settings=settings, embedder=embedder)
        return late_scores(question, texts, ctx)[2].tolist()

    keep, drop = sims("keep"), sims("drop")
    assert keep[0] > keep[1]
    assert drop[1] > drop[0]


def test_a_text_longer_than_the_models_window_is_read_to_its_end(embedder):
    """all-MiniLM-L6-v2 reads 256 word pieces; a section-level candidate is often longer, and its
    tail must still be able to match the question."""
    filler = "The committee met again on Tuesday to review the budget. " * 40  # ~480 pieces
    text = filler + "Penn Treebank."
    one = _read_whole(embedder.embed_tokens, [text], max_windows=1)[0]
    whole = _read_whole(embedder.embed_tokens, [text])[0]
    vector, tokens, offsets = whole
    assert len(one[1]) <= embedder.max_tokens < len(tokens) == len(offsets)
    assert offsets[-1][1] == len(text)  # the tail was read, with spans into the whole text
    assert one[2][-1][1] < len(filler)
    assert np.all(np.diff(offsets[:, 0]) > 0)  # windows follow each other, no overlap
    assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)
    query = embedder.embed_tokens(["Penn Treebank"])[0].tokens

    def unit(t: np.ndarray) -> np.ndarray:
        return t / np.linalg.norm(t, axis=1, keepdims=True)

    assert maxsim(unit(query), unit(tokens)) > maxsim(unit(query), unit(one[1])) + 0.1
    # a short text is read once, exactly as embed_tokens gives it
    short = _read_whole(embedder.embed_tokens, ["a short text"])[0]
    assert len(short[1]) == len(embedder.embed_tokens(["a short text"])[0].tokens)


def test_min_max_scales_and_keeps_equal_values_at_one():
    assert min_max(np.array([2.0, 4.0, 3.0])).tolist() == [0.0, 1.0, 0.5]
    assert min_max(np.array([5.0, 5.0])).tolist() == [1.0, 1.0]


def test_late_rerank_finds_the_answer_diluted_in_a_long_paragraph(embedder):
    """The answer is one sentence of a paragraph about something else, so mean pooling ranks a
    generic passage about evaluation above it (checked below); MaxSim matches the question's
    words where they occur and lifts the paragraph holding them."""
    question = "Which treebank do they report results on?"
    texts = [
        "Evaluation matters: a careful choice of benchmarks and metrics decides how far results "
        "can be trusted and compared across papers.",
        "Related work on language modelling has explored recurrent and convolutional "
        "architectures for sequence prediction.",
        "The model is a two-layer bidirectional LSTM with 300-dimensional hidden states, "
        "trained with Adam at a learning rate of 0.001 for twenty epochs, with dropout of 0.5 "
        "between the layers and early stopping on the validation loss. We report results on "
        "the Penn Treebank. Gradients were clipped at a norm of five.",
        "an unrelated tail item",
    ]
    # no graph here: the candidates are read without section paths (tests/integration/
    # test_late_context.py covers those)
    # the unfitted rule (cosine + MaxSim only): test_rerank_weights.py covers the fitted ones
    # (no graph here: the chain-pair stage, which reads links from one, is off)
    settings = Settings(rerank={"query_head": "off"}).with_tuning(
        rerank={"n_candidates": 3, "section_context": False, "chain_pair": False}
    )
    ctx = SimpleNamespace(settings=settings, embedder=embedder)
    items = [RetrievedItem(id=str(i), text=t, score=1.0 - i / 10) for i, t in enumerate(texts)]
    out = apply_selection("late", question, items, ctx)
    by_id = {it.id: it.breakdown for it in out}
    assert by_id["0"]["late_cosine"] > by_id["2"]["late_cosine"]  # pooling alone misses it
    assert out[0].id == "2"
    assert [it.id for it in out][-1] == "3"  # beyond n_candidates: kept, in its place
    assert len(out) == len(items)  # a rerank keeps every item; k or the budget cuts
    top = out[0].breakdown
    assert top["retrieval_score"] == pytest.approx(0.8)
    assert top["late_maxsim"] > max(by_id["0"]["late_maxsim"], by_id["1"]["late_maxsim"])
    assert 0.0 < top["late_maxsim"] <= 1.0 and -1.0 <= top["late_cosine"] <= 1.0
    # the score is min-max(cos) + min-max(maxsim) over the reranked three: in [0, 2]
    assert all(0.0 <= it.score <= 2.0 for it in out[:3])
    assert candidates_needed("late", 5, ctx) == 3 + 2 == max(5, 3)
    assert not decides_count("late") and decides_count("sage")


def test_late_rerank_without_token_states_says_what_to_do():
    class VectorsOnly:
        model_name = "vectors-only"

        def embed(self, texts):
            return np.ones((len(texts), 2), dtype=np.float32)

    ctx = SimpleNamespace(
        settings=Settings().with_tuning(rerank={"section_context": False}), embedder=VectorsOnly()
    )
    items = [RetrievedItem(id="a", text="a", score=1.0)]
    with pytest.raises(ConfigError, match="word-piece states") as raised:
        apply_selection("late", "q", items, ctx)
    # the hint names a setting that exists
    assert "KGP_EMBEDDING__PROVIDER=onnx" in str(raised.value.hint)
    assert Settings(embedding={"provider": "onnx"}).embedding.provider == "onnx"


def test_text_cache_computes_each_text_once_and_keeps_the_most_recent():
    from kg_platform.retrieval.rerank.text_cache import TextCache

    calls: list[list[str]] = []

    def upper(texts: list[str]) -> list[str]:
        calls.append(texts)
        return [t.upper() for t in texts]

    cache: TextCache[str] = TextCache(2)
    assert cache.get_many("m", ["a", "b", "a"], upper) == ["A", "B", "A"]
    assert calls == [["a", "b"]]  # distinct texts, one call
    assert cache.get_many("m", ["b"], upper) == ["B"] and len(calls) == 1  # cached
    cache.get_many("m", ["c"], upper)  # evicts "a", the least recently used
    cache.get_many("m", ["a", "b"], upper)
    assert calls[-1] == ["a"]
    cache.get_many("other-model", ["b"], upper)  # models never share an entry
    assert calls[-1] == ["b"]


def test_section_paths_lose_only_the_head_every_candidate_shares():
    scoped = {"a": "Paper > Method > Model", "b": "Paper > Method", "c": "Paper > Results"}
    assert without_shared_head(scoped) == {"a": "Method > Model", "b": "Method", "c": "Results"}
    # one section for all: nothing left to read but the texts
    assert without_shared_head({"a": "Paper > Data", "b": "Paper > Data"}) == {"a": "", "b": ""}
    # different documents (a pooled search, QA paragraphs' titles) keep their whole paths
    pooled = {"a": "Paper A > Data", "b": "Paper B > Data"}
    assert without_shared_head(pooled) == pooled
    assert without_shared_head({"a": "Paper > Data"}) == {"a": "Paper > Data"}


def test_the_int8_rerank_reads_the_int8_copy_and_keeps_its_states_apart(embedder):
    """``rerank.quantize = "int8"`` scores with the int8 copy of the bundled model (the copy
    entity names use); its states are cached apart from fp32's, so a process that reranks both
    ways never mixes them, and the two agree closely without being equal."""
    from kg_platform.retrieval.rerank.late_interaction import rerank_embedder

    question = "Which treebank do they report results on?"
    texts = ["We report results on the Penn Treebank.", "Gradients were clipped at five."]
    ctxs = {
        q: SimpleNamespace(
            settings=Settings().with_tuning(rerank={"section_context": False, "quantize": q}),
            embedder=embedder,
        )
        for q in ("none", "int8")
    }
    if getattr(embedder, "quantize", None) != "none":
        pytest.skip("the test embedder is not the fp32 ONNX model the int8 copy derives from")
    assert rerank_embedder(ctxs["none"]) is embedder
    assert getattr(rerank_embedder(ctxs["int8"]), "quantize", None) == "int8"
    _, cos32, sim32 = late_scores(question, texts, ctxs["none"])
    _, cos8, sim8 = late_scores(question, texts, ctxs["int8"])
    assert not np.array_equal(sim32, sim8)  # a different model read them
    assert np.allclose(sim32, sim8, atol=0.05) and np.allclose(cos32, cos8, atol=0.05)
    assert sim8[0] > sim8[1] and sim32[0] > sim32[1]
    _, _, again = late_scores(question, texts, ctxs["none"])
    assert np.array_equal(again, sim32)  # fp32 states came back from the cache unchanged


def _scoped_ctx(embedder, quantize: str, sources: int, chunks: int) -> RetrievalContext:
    """A context over a scope of ``sources`` holding ``chunks`` level-2 chunks (the shape
    ``auto`` reads), without a database: the shape query's answer is given."""
    graph = SimpleNamespace(read=lambda name, **params: [{"sources": sources, "chunks": chunks}])
    return RetrievalContext(
        graph, embedder, Settings().with_tuning(rerank={"quantize": quantize}), "c"
    )


def test_auto_quantisation_reads_candidates_with_int8_and_the_question_with_the_heads_copy(
    embedder,
):
    """``rerank.quantize = auto`` (the default): candidates from a graph are read by the int8
    copy (half the CPU), the question by the copy the query head was trained on where the head
    reads it (long documents; its provenance's ``states``), else by the candidates' copy; texts
    outside any graph by the configured model, and an explicit setting reads both with one."""
    from kg_platform.retrieval.rerank.late_interaction import (
        question_embedder,
        question_quantize,
        rerank_embedder,
        rerank_quantize,
    )
    from kg_platform.retrieval.rerank.query_head import head_states

    assert Settings().tuning.rerank.quantize == "auto"
    passages = _scoped_ctx(embedder, "auto", sources=50, chunks=50)
    documents = _scoped_ctx(embedder, "auto", sources=2, chunks=60)
    bare = SimpleNamespace(settings=Settings(), embedder=embedder)
    assert rerank_quantize(passages) == rerank_quantize(documents) == "int8"
    assert question_quantize(passages) == "int8"  # no head reads passages' questions
    assert question_quantize(documents) == head_states() in ("none", "int8")
    assert rerank_quantize(bare) == question_quantize(bare) == "none"
    for mode in ("none", "int8"):  # an explicit setting wins over the scope's shape
        for sources, chunks in ((50, 50), (2, 60)):
            ctx = _scoped_ctx(embedder, mode, sources=sources, chunks=chunks)
            assert rerank_quantize(ctx) == question_quantize(ctx) == mode
    if getattr(embedder, "quantize", None) != "none":
        pytest.skip("the test embedder is not the fp32 ONNX model the int8 copy derives from")
    int8 = rerank_embedder(documents)
    assert getattr(int8, "quantize", None) == "int8" and rerank_embedder(passages) is int8
    if head_states() != "none":
        pytest.skip("the shipped head was trained on int8 states: both sides read int8")
    assert question_embedder(documents) is embedder  # the configured fp32 model itself
    # In a document scope the cosine term pairs the fp32 question with int8 candidates. Texts
    # no other test reads: int8's dynamic quantisation scales a call's activations by the whole
    # call, so a text's int8 vector depends on what it was read with, and the rerank's state
    # cache would hand back another test's reading.
    question = "Which corpus of parsed sentences do the authors evaluate on?"
    texts = ["Results are reported on the WSJ section of the treebank.", "We use dropout."]
    _, cos, _ = late_scores(question, texts, documents)
    q32 = embedder.embed_tokens([question])[0].vector
    q8 = int8.embed_tokens([question])[0].vector
    t8 = np.asarray([s.vector for s in int8.embed_tokens(texts)])  # read as the rerank reads
    t32 = np.asarray([s.vector for s in embedder.embed_tokens(texts)])
    np.testing.assert_allclose(cos, t8 @ q32, atol=1e-5)
    assert not np.allclose(cos, t32 @ q32, atol=1e-4)  # the candidates were not read by fp32
    assert not np.allclose(cos, t8 @ q8, atol=1e-4)  # nor the question by int8
