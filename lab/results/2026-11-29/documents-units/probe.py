"""How much of `propagate`'s in-paper lead over `hybrid` is its unit: `hybrid` over level-1
chunks (the unit `propagate` returns), with the same selection (the late rerank and the document
rerank), on `bench/longdoc` scoped to each paper, at 512 and 1024 tokens.

Run from the repository root, Neo4j up, `doc-longdoc` ingested: python probe.py > out.txt
"""

import json
import os
from pathlib import Path

from kg_platform.config import get_settings
from kg_platform.embedding import get_embedder
from kg_platform.graph import GraphClient
from kg_platform.retrieval.base import register_strategy
from kg_platform.retrieval.baselines import HybridChunks
from kg_platform_lab.evaluation.harness import EvalConfig, run_evaluation

BENCH = Path(os.environ.get("BENCH", "../shared/bench"))
KEYS = ("evidence_recall", "sentence_recall", "evidence_token_coverage", "mrr")


@register_strategy("hybrid-l1", "hybrid over level-1 chunks (a probe)", scoped=True)
def _hybrid_l1(ctx):
    return HybridChunks(ctx, level=1, name="hybrid-l1")


def main() -> None:
    settings = get_settings()
    embedder = get_embedder(settings.embedding)
    with GraphClient.from_settings(settings) as graph:
        for budget in (512, 1024):
            cfg = EvalConfig(
                dataset=BENCH / "longdoc",
                strategies=["hybrid-l1"],
                budget_tokens=budget,
                corpus="doc-longdoc",
                ingest=False,
                select="late",
            )
            report = run_evaluation(cfg, graph, embedder, settings).to_json()
            row = report["strategies"]["hybrid-l1"]
            print(budget, json.dumps({k: round(row[k], 4) for k in KEYS}))


main()
