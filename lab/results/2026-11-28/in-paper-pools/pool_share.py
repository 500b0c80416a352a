"""How much of its paper the late rerank reads for a question scoped to that paper.

Per `bench/longdoc` question: the level-2 chunks of its paper in the local `doc-longdoc` corpus
(what `hybrid`, `vector` and `bm25` return inside a paper) against the candidates the rerank
reads (`rerank.n_candidates`, 30 for these strategies). Then, from the per-question
files (`2026-11-27/default-path/longdoc-late-b*.jsonl`, the three baselines with the same
rerank), how often two baselines end with the same ranking.

Run from the repository root with the local Neo4j up:
`.venv/bin/python lab/results/2026-11-28/in-paper-pools/pool_share.py`
"""

from __future__ import annotations

import collections
import json
import statistics
from pathlib import Path

from kg_platform.config import get_settings
from kg_platform.graph.client import GraphClient

BENCH = Path("../shared/bench/longdoc")
CANDIDATES = 30
BASELINES = Path("lab/results/2026-11-27/default-path")


def level2_per_paper() -> dict[str, int]:
    """Paper file stem (the questions' ``doc_id``) -> its level-2 chunks in ``doc-longdoc``."""
    with GraphClient.from_settings(get_settings()) as graph:
        rows = graph.read_raw(
            "MATCH (s:Source {corpus: $corpus}) "
            "OPTIONAL MATCH (c:Chunk {source_id: s.id, level: 2}) "
            "RETURN s.uri AS uri, count(c) AS chunks",
            corpus="doc-longdoc",
        )
    return {Path(str(r["uri"])).stem: int(r["chunks"]) for r in rows}


def main() -> None:
    sizes = level2_per_paper()
    questions = [json.loads(line) for line in (BENCH / "questions.jsonl").open()]
    per_question = [sizes[q["doc_id"]] for q in questions if q["doc_id"] in sizes]
    whole = sum(n <= CANDIDATES for n in per_question)
    share = statistics.mean(min(n, CANDIDATES) / n for n in per_question)
    q = statistics.quantiles(sorted(sizes.values()), n=10)
    print(
        f"papers {len(sizes)}: level-2 chunks p10 {q[0]:.0f}, median "
        f"{statistics.median(sizes.values()):.0f}, p90 {q[-1]:.0f}"
    )
    print(
        f"questions {len(per_question)}: paper fits in {CANDIDATES} candidates for {whole} "
        f"({whole / len(per_question):.0%}); mean share of the paper read {share:.3f}"
    )
    for budget in (512, 1024):
        runs: dict[str, dict[str, dict]] = collections.defaultdict(dict)
        for line in (BASELINES / f"longdoc-late-b{budget}.jsonl").open():
            row = json.loads(line)
            runs[row["strategy"]][row["id"]] = row
        for a, b in (("hybrid", "vector"), ("hybrid", "bm25"), ("vector", "bm25")):
            ids = runs[a].keys() & runs[b].keys()
            same_rank = sum(runs[a][i]["ids"] == runs[b][i]["ids"] for i in ids)
            same_recall = sum(
                runs[a][i]["evidence_recall"] == runs[b][i]["evidence_recall"] for i in ids
            )
            mean_a = statistics.mean(runs[a][i]["evidence_recall"] for i in ids)
            mean_b = statistics.mean(runs[b][i]["evidence_recall"] for i in ids)
            print(
                f"@{budget} {a} vs {b} + late: same ranking {same_rank}/{len(ids)}, same "
                f"recall {same_recall}/{len(ids)}, recall {mean_a:.3f} vs {mean_b:.3f}"
            )


if __name__ == "__main__":
    main()
