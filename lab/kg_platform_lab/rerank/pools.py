"""Candidate pools: what each strategy returned for each training question, with the features
the late rerank combines (cosine, MaxSim, the strategy's score, its rank) and the question's gold,
saved as JSON lines so the weights can be fitted again without Neo4j.

A pool holds the strategy's first ``fetch`` candidates in its own order; the late features are
computed for the first ``head`` of them in one call (the rerank reads them under their section
paths, as the product does), so fitting ``rerank.n_candidates`` up to ``head`` needs no new
retrieval.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kg_platform.retrieval.base import RetrievalContext, get_strategy
from kg_platform.retrieval.rerank.late_interaction import late_scores
from kg_platform_lab.evaluation.docqa import is_docqa_folder
from kg_platform_lab.evaluation.harness import load_examples, scope_examples

if TYPE_CHECKING:
    from kg_platform.config import Settings
    from kg_platform.embedding import Embedder
    from kg_platform.graph import GraphClient


@dataclass
class Pool:
    """One strategy's candidates for one question."""

    dataset: str
    question_id: str
    strategy: str
    ids: list[str]
    texts: list[str]
    scores: list[float]  # the strategy's own
    cosine: list[float]  # for the first len(cosine) candidates
    maxsim: list[float]
    strategy_ms: float

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)


def pool_dataset_name(dataset: Path) -> str:
    """The name a dataset's pools carry (``Pool.dataset``): a document-QA folder's name, a QA
    file's stem."""
    return dataset.name if is_docqa_folder(dataset) else dataset.stem


def collect_pools(
    dataset: Path,
    corpus: str,
    strategies: list[str],
    graph: "GraphClient",
    embedder: "Embedder",
    settings: "Settings",
    *,
    fetch: int = 64,
    head: int = 40,
    limit: int | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> Iterator[Pool]:
    """Yield a :class:`Pool` per question and strategy. Document-QA folders are scoped to the
    question's paper (as ``kgp lab eval`` does by default); QA files are one pooled corpus."""
    docqa = is_docqa_folder(dataset)
    _, examples = load_examples(dataset, document_qa=docqa, limit=limit)
    scopes: dict[str, list[str]] = {}
    if docqa:
        examples, scopes = scope_examples(graph, corpus, examples)
    ctx = RetrievalContext(graph=graph, embedder=embedder, settings=settings, corpus=corpus)
    name = pool_dataset_name(dataset)
    runners = {s: get_strategy(s, ctx) for s in strategies}
    # questions outer, strategies inner: the strategies' candidates overlap, and the late
    # scorer's cache of word-piece states then serves them while they are fresh
    for i, ex in enumerate(examples):
        if docqa:
            ctx.sources = scopes[ex.doc_id]
        for strategy_name, strategy in runners.items():
            t0 = time.perf_counter()
            items = list(strategy.retrieve(ex.question, fetch))
            ms = (time.perf_counter() - t0) * 1000.0
            top = items[:head]
            _, cos, sim = late_scores(
                ex.question, [it.text for it in top], ctx, ids=[it.id for it in top]
            )
            yield Pool(
                dataset=name,
                question_id=ex.id,
                strategy=strategy_name,
                ids=[it.id for it in items],
                texts=[it.text for it in items],
                scores=[float(it.score) for it in items],
                cosine=[float(x) for x in cos],
                maxsim=[float(x) for x in sim],
                strategy_ms=ms,
            )
        if progress:
            progress(name, i + 1, len(examples))


def read_pools(path: Path) -> list[Pool]:
    """Pools written by ``kgp lab rerank collect`` (one JSON object per line)."""
    with path.open(encoding="utf-8") as fh:
        return [Pool(**json.loads(line)) for line in fh if line.strip()]
