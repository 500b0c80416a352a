"""Fitting the late rerank's weights: the fit reorders exactly as the product does, finds the
signal the pools hold, and the sample it fits on is fixed by paper."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from kg_platform.config import Settings
from kg_platform.retrieval.base import RetrievedItem
from kg_platform.retrieval.rerank.weights import LateWeights
from kg_platform.retrieval.rerank import selection
from kg_platform_lab.evaluation.docqa import DocQuestion
from kg_platform_lab.evaluation.sample import sample_docqa
from kg_platform_lab.rerank.fit import FIXED, Scorer, fit_strategy, grid, rerank_order
from kg_platform_lab.rerank.pools import Pool, read_pools


def _sentence(i: int) -> str:
    return f"Paragraph number {i} states fact {i * 7} about topic {i % 5}."


def _pools(n_questions: int, seed: int = 3) -> tuple[list[Pool], dict]:
    """Pools where the strategy's score finds the gold candidate and cosine/MaxSim are noise."""
    rng = np.random.default_rng(seed)
    pools, examples = [], {}
    for q in range(n_questions):
        texts = [_sentence(q * 100 + i) for i in range(12)]
        gold = int(rng.integers(0, 12))
        scores = rng.uniform(0.0, 0.5, 12)
        scores[gold] = 1.0
        order = list(np.argsort(-rng.uniform(size=12)))  # the strategy's order is noise too
        pools.append(
            Pool(
                dataset="toy",
                question_id=f"q{q}",
                strategy="s",
                ids=[f"c{q}-{i}" for i in order],
                texts=[texts[i] for i in order],
                scores=[float(scores[i]) for i in order],
                cosine=[float(x) for x in rng.uniform(size=12)],
                maxsim=[float(x) for x in rng.uniform(size=12)],
                strategy_ms=1.0,
            )
        )
        examples[("toy", f"q{q}")] = DocQuestion(
            id=f"q{q}",
            question="?",
            answer="",
            doc_id="d",
            title="",
            evidence_sets=[[texts[gold]]],
            document=Path("d.md"),
        )
    return pools, examples


def test_the_fit_finds_the_strategy_score_when_it_is_the_signal():
    pools, examples = _pools(40)
    scorer = Scorer(examples, [20])  # ~ one candidate's tokens: only the first counts
    candidates = grid({"maxsim": (0.0, 1.0), "retrieval": (0.0, 10.0), "rank": (0.0,)})
    fit = fit_strategy("s", pools, scorer, n=12, candidates=candidates)
    assert fit.n_candidates == 12
    assert fit.best.retrieval > 0
    assert fit.best_recall[0] == pytest.approx(1.0)
    assert fit.fixed_recall[0] < 0.5  # cosine + MaxSim alone follow the noise
    assert fit.per_dataset["toy"]["fitted"] == fit.best_recall


def test_the_weights_file_carries_each_fits_candidate_count_to_the_product(tmp_path):
    """A fit chooses its candidate count per strategy (``--n-candidates``); the file it writes
    makes the product's rerank read that many of the strategy's items."""
    from kg_platform.retrieval.rerank.weights import candidates_for, weights_for
    from kg_platform_lab.rerank.weights_file import write_weights

    pools, examples = _pools(20)
    scorer = Scorer(examples, [20])
    candidates = grid({"maxsim": (0.0, 1.0), "retrieval": (0.0, 10.0), "rank": (0.0,)})
    fit = fit_strategy("s", pools, scorer, n=12, candidates=candidates)
    path = tmp_path / "weights.json"
    report = {"datasets": ["toy"], "budgets": [20], "default_from": "s"}
    write_weights(path, [fit], report)
    settings = Settings(rerank={"weights_file": str(path)})
    assert candidates_for("s", settings) == 12
    assert candidates_for("other", settings) == 30
    assert weights_for("s", settings) == fit.best


def test_the_fit_orders_candidates_exactly_as_the_product_rerank(embedder, monkeypatch):
    """rerank_order on a pool equals late_rerank on the same items with the same weights."""
    import kg_platform.retrieval.rerank.weights as rw

    weights = LateWeights(cosine=1.0, maxsim=0.5, retrieval=1.5, rank=0.5)
    monkeypatch.setattr(
        rw,
        "load_weights",
        lambda path=rw.SHIPPED_WEIGHTS: {"default": weights.to_dict(), "strategies": {}},
    )
    question = "Which treebank do they report results on?"
    texts = [
        "We report results on the Penn Treebank.",
        "Related work explored recurrent architectures.",
        "The treebank has forty thousand sentences.",
        "Training used Adam.",
        "Results are in Table 2.",
    ]
    items = [
        RetrievedItem(id=str(i), text=t, score=[0.2, 0.9, 0.5, 0.7, 0.1][i])
        for i, t in enumerate(texts)
    ]
    ctx = SimpleNamespace(
        # no graph here: the chain-pair stage after the late rerank (it reads links) is off
        settings=Settings().with_tuning(
            rerank={"section_context": False, "n_candidates": 4, "chain_pair": False}
        ),
        embedder=embedder,
    )
    product = [it.id for it in selection.late_rerank(question, items, ctx, "any")]
    from kg_platform.retrieval.rerank.late_interaction import late_scores

    _, cos, sim = late_scores(question, texts, ctx)
    pool = Pool(
        "toy",
        "q",
        "any",
        [it.id for it in items],
        texts,
        [it.score for it in items],
        list(cos),
        list(sim),
        0.0,
    )
    assert [pool.ids[i] for i in rerank_order(pool, weights, 4)] == product
    assert rerank_order(pool, None, 4) == [0, 1, 2, 3, 4]


def test_pools_round_trip(tmp_path):
    pools, _ = _pools(2)
    path = tmp_path / "pools.jsonl"
    path.write_text("".join(p.to_json() + "\n" for p in pools), encoding="utf-8")
    assert read_pools(path) == pools


def test_the_sample_is_by_paper_fixed_and_nested(tmp_path):
    src = tmp_path / "src"
    (src / "papers").mkdir(parents=True)
    rows = []
    for d in range(6):
        (src / "papers" / f"p{d}.md").write_text(f"# Paper {d}\n\ntext\n", encoding="utf-8")
        rows += [{"id": f"p{d}-q{j}", "question": "?", "doc_id": f"p{d}"} for j in range(d % 3 + 1)]
    (src / "questions.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
    )
    small = sample_docqa(src, tmp_path / "s2", 2)
    big = sample_docqa(src, tmp_path / "s4", 4)
    small_papers = {p.name for p in (tmp_path / "s2" / "papers").iterdir()}
    big_papers = {p.name for p in (tmp_path / "s4" / "papers").iterdir()}
    assert len(small_papers) == 2 and small_papers < big_papers
    kept = [
        json.loads(line) for line in (tmp_path / "s2" / "questions.jsonl").read_text().splitlines()
    ]
    assert {r["doc_id"] + ".md" for r in kept} == small_papers  # every question of a kept paper
    assert (
        small.questions == len(kept) == sum(1 for r in rows if r["doc_id"] + ".md" in small_papers)
    )
    again = sample_docqa(src, tmp_path / "s2b", 2)
    assert {p.name for p in (tmp_path / "s2b" / "papers").iterdir()} == small_papers
    assert again.questions == small.questions and big.papers == 4
    assert FIXED == LateWeights()
