"""Split each dev set's questions by whether the keys finder matches a named entity of the corpus
(and whether a capitalised name matched no key), with `entity` + late and `mogg` + late recall
per group. Run from the repository root with the local Neo4j up:
`.venv/bin/python lab/results/2026-11-28/question-keys/named_split.py`."""

from __future__ import annotations

import json
from collections import defaultdict

from kg_platform.retrieval.question_keys import question_mentions
from kg_platform.sdk import KnowledgePlatform

BASE = "lab/results/2026-11-28/question-keys"


def recall(path: str, strategy: str) -> dict[str, float]:
    with open(path, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    return {r["id"]: r["paragraph_recall"] for r in rows if r["strategy"] == strategy}


def main() -> None:
    kp = KnowledgePlatform.from_env()
    for d in ["hotpotqa", "2wikimultihopqa", "musique"]:
        with open(f"../shared/bench/dev/{d}.jsonl", encoding="utf-8") as fh:
            questions = [json.loads(line) for line in fh]
        walk = recall(f"{BASE}/keys-{d}.jsonl", "default")
        hops = recall(f"{BASE}/others-late-{d}.jsonl", "mogg")
        groups: dict[str, list[tuple[float, float]]] = defaultdict(list)
        for q in questions:
            found = question_mentions(kp.graph, f"qa-late-{d}", q["question"])
            named = sum(1 for m in found if m.type not in (None, "concept"))
            unmatched = sum(1 for m in found if m.type is None)
            if q["id"] in walk and q["id"] in hops:
                key = f"named={min(named, 1)} unmatched={min(unmatched, 1)}"
                groups[key].append((walk[q["id"]], hops[q["id"]]))
        for key, pairs in sorted(groups.items()):
            n = len(pairs)
            print(
                d,
                key,
                n,
                round(sum(a for a, _ in pairs) / n, 3),
                round(sum(b for _, b in pairs) / n, 3),
            )


if __name__ == "__main__":
    main()
