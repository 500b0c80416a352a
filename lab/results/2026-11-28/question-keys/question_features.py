"""Do features of the question tell `entity` + late from `mogg` + late apart, per set? Groups the
dev questions by the question's named mentions (keys finder), by comparison words, and by the
question word, with each strategy's mean paragraph recall per group (output:
question-features.txt). Run from the repository root with the local Neo4j up."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable

from kg_platform.retrieval.entity import EntityStrategy
from kg_platform.sdk import KnowledgePlatform

BASE = "lab/results/2026-11-28/question-keys"
SETS = ["hotpotqa", "2wikimultihopqa", "musique"]
COMPARISON = re.compile(r"\b(both|same|or|which one|first|older|younger|earlier|later)\b")
WH = {"which", "who", "what", "when", "where", "how", "is", "are", "were", "was", "did", "do"}


def recall(path: str, strategy: str) -> dict[str, float]:
    with open(path, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    return {r["id"]: r["paragraph_recall"] for r in rows if r["strategy"] == strategy}


def features() -> list[dict]:
    kp = KnowledgePlatform.from_env()
    rows = []
    for d in SETS:
        walker = EntityStrategy(kp.retrieval_context(f"qa-late-{d}"))
        walk = recall(f"{BASE}/keys-{d}.jsonl", "default")
        hops = recall(f"{BASE}/others-late-{d}.jsonl", "mogg")
        with open(f"../shared/bench/dev/{d}.jsonl", encoding="utf-8") as fh:
            questions = [json.loads(line) for line in fh]
        for q in questions:
            mentions = walker.question_mentions(q["question"])
            text = q["question"].lower()
            first = text.split()[0] if text.split() else ""
            rows.append(
                {
                    "set": d,
                    "entity": walk[q["id"]],
                    "mogg": hops[q["id"]],
                    "named": sum(1 for m in mentions if m[2] not in ("concept", "name")),
                    "comparison": int(bool(COMPARISON.search(text))),
                    "wh": first if first in WH else "other",
                }
            )
    return rows


def show(rows: list[dict], title: str, key: Callable[[dict], object]) -> None:
    print(title)
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in rows:
        groups[(r["set"], str(key(r)))].append(r)
    for (d, value), members in sorted(groups.items()):
        n = len(members)
        walk = sum(r["entity"] for r in members) / n
        hops = sum(r["mogg"] for r in members) / n
        print(f"  {d:16} {value:8} n={n:3} entity={walk:.3f} mogg={hops:.3f}")


def main() -> None:
    rows = features()
    show(rows, "named mentions (3 = 3 or more)", lambda r: min(r["named"], 3))
    show(rows, "comparison words", lambda r: r["comparison"])
    show(rows, "question word", lambda r: r["wh"])


if __name__ == "__main__":
    main()
