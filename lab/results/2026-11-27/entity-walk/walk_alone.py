"""The entity walk alone (no selection, no budget): share of gold paragraphs in its top 5/8/12,
for the questions 1-50 and 51-100 of a dev set, before (entity_ppr_v1.cypher, next to this
file) and after (the shipped kg_platform/cypher/retrieval/entity_ppr.cypher) the bridging rule.

Run from the repo root: python lab/results/2026-11-27/entity-walk/walk_alone.py DATASET
(corpus qa-DATASET, ingested with the NLP layer, on the local Neo4j)."""

import json
import sys
from pathlib import Path

import kg_platform
from kg_platform.retrieval.entity import EntityStrategy
from kg_platform.sdk import KnowledgePlatform

HERE = Path(__file__).parent
QUERIES = {
    "before": (HERE / "entity_ppr_v1.cypher").read_text(),
    "shipped": (
        Path(kg_platform.__file__).parent / "cypher" / "retrieval" / "entity_ppr.cypher"
    ).read_text(),
}
KS = (5, 8, 12)


def recall_by_half(dataset: str, queries: dict[str, tuple[str, dict]]) -> None:
    """Print, per named walk query (its text and any parameters beyond the shipped ones), the
    share of gold paragraphs in its top 5/8/12 for questions 1-50 / 51-100."""
    corpus = f"qa-{dataset}"
    questions = [json.loads(line) for line in open(f"../shared/bench/dev/{dataset}.jsonl")]
    kp = KnowledgePlatform.from_env()
    ctx = kp.retrieval_context(corpus)
    strategy = EntityStrategy(ctx)
    cfg = ctx.settings.entity_graph
    seeds = {q["id"]: strategy.seeds(q["question"]) for q in questions}
    for name, (query, extra) in queries.items():
        found = {k: [0, 0, 0, 0] for k in KS}  # hits, gold (first half); hits, gold (second)
        for i, q in enumerate(questions):
            gold = {fact[0] for fact in q["supporting_facts"]}
            qv, seed_rows = seeds[q["id"]]
            records = kp.graph.driver.execute_query(
                query,
                seeds=[{"id": s["id"], "w": s["w"]} for s in seed_rows],
                qv=qv,
                fetch=ctx.index_fetch(max(cfg.chunk_seeds, 1), cfg.fetch),
                k_seed=cfg.chunk_seeds,
                corpus=corpus,
                chunk_weight=cfg.chunk_weight,
                damping=cfg.damping,
                max_degree=cfg.max_degree,
                width=cfg.width,
                k=max(KS),
                **extra,
            ).records
            titles = [r["source_title"] for r in records]
            half = 0 if i < 50 else 2
            for k in KS:
                found[k][half] += len(gold & set(titles[:k]))
                found[k][half + 1] += len(gold)
        print(
            dataset,
            name,
            " ".join(f"@{k}: {f[0] / f[1]:.3f} / {f[2] / f[3]:.3f}" for k, f in found.items()),
            flush=True,
        )


def main(dataset: str) -> None:
    recall_by_half(dataset, {name: (query, {}) for name, query in QUERIES.items()})


if __name__ == "__main__":
    main(sys.argv[1])
