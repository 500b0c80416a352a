"""Which sentences should the no-LLM answer quote? On `bench/longdoc` (306 questions, each
scoped to its paper), the share of questions whose quoted sentences hold a gold evidence
sentence, for ways of choosing 3 sentences out of the 5 chunks retrieved:

- `shipped`: the strategy `auto` ran before this session (`hybrid` inside papers, `entity` or
  `mogg` over passages) without the rerank, as `kgp ask` without an LLM retrieved, and the 3
  sentences closest to the question by cosine;
- `cosine`: the default path's 5 chunks (`auto` + the late rerank), the 3 closest by cosine;
- `chunk-order`: the same chunks, the closest sentence of each chunk in the ranking's order;
- `first+cosine`: the same chunks, the first chunk's closest sentence, then the closest of all.

With DATASET=hotpotqa (2wikimultihopqa, musique) the same over that dev set's corpus
`qa-late-<set>`, gold = its supporting sentences (MuSiQue: paragraphs).

Run from the repository root, Neo4j up, the corpora ingested: python probe.py > out.txt
"""

import os
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from kg_platform.reasoning.fallback import _sentences
from kg_platform.retrieval.pipeline import retrieve
from kg_platform.sdk import KnowledgePlatform
from kg_platform_lab.evaluation.harness import load_examples, scope_examples
from kg_platform_lab.evaluation.metrics import normalise

BENCH = Path(os.environ.get("BENCH", "../shared/bench"))
TOP, CHUNKS = 3, 5


def by_cosine(sims: np.ndarray, pairs: list) -> list[int]:
    return [int(j) for j in np.argsort(-sims, kind="stable")]


def chunk_order(sims: np.ndarray, pairs: list) -> list[int]:
    ranked = by_cosine(sims, pairs)
    best: dict[int, int] = {}
    for j in ranked:
        best.setdefault(pairs[j][0], j)
    return [best[i] for i in sorted(best)] + [j for j in ranked if best[pairs[j][0]] != j]


def first_then_cosine(sims: np.ndarray, pairs: list) -> list[int]:
    ranked = by_cosine(sims, pairs)
    first = next(j for j in ranked if pairs[j][0] == 0)
    return [first] + [j for j in ranked if j != first]


def picked(order: list[int], pairs: list) -> list[str]:
    out, seen = [], set()
    for j in order:
        key = " ".join(pairs[j][1].lower().split())
        if key not in seen:
            seen.add(key)
            out.append(pairs[j][1])
        if len(out) >= TOP:
            break
    return out


def main() -> None:
    kp = KnowledgePlatform.from_env()
    dataset = os.environ.get("DATASET", "longdoc")
    documents = dataset == "longdoc"
    scopes: dict = {}
    if documents:
        corpus = "doc-longdoc"
        _, examples = load_examples(BENCH / "longdoc", document_qa=True)
        examples, scopes = scope_examples(kp.graph, corpus, examples)
    else:
        corpus = f"qa-late-{dataset}"
        _, examples = load_examples(BENCH / "dev" / f"{dataset}.jsonl", document_qa=False)
    hits = defaultdict(list)
    for n, ex in enumerate(examples):
        if documents:
            gold = {
                normalise(s) for ann in ex.sentence_sets for par in ann for s in par if len(s) > 20
            }
        else:
            gold = {u for fact in ex.gold for u in fact.units if len(u) > 20}
        ctx = kp.retrieval_context(corpus)
        if documents:
            ctx.sources = scopes[ex.doc_id]
        before = "hybrid" if documents else "auto"
        runs = {
            "shipped": retrieve(ctx, ex.question, strategy=before, select="none", k=CHUNKS),
            "default": retrieve(ctx, ex.question, strategy="auto", select="auto", k=CHUNKS),
        }
        for name, res in runs.items():
            pairs = [(i, s) for i, it in enumerate(res.items[:CHUNKS]) for s in _sentences(it.text)]
            if not pairs:
                continue
            vecs = kp.embedder.embed([ex.question, *[s for _, s in pairs]])
            sims = vecs[1:] @ vecs[0]
            choices = (
                {"shipped": [by_cosine]}
                if name == "shipped"
                else {
                    "cosine": [by_cosine],
                    "chunk-order": [chunk_order],
                    "first+cosine": [first_then_cosine],
                }
            )
            for label, (rule,) in choices.items():
                quoted = [normalise(s) for s in picked(rule(sims, pairs), pairs)]
                found = sum(any(g in q or q in g for g in gold) for q in quoted)
                hits[label].append((found > 0, found))
        if n % 50 == 0:
            print(f"{n}/{len(examples)}", file=sys.stderr, flush=True)
    for label, rows in hits.items():
        any_hit = np.mean([a for a, _ in rows])
        mean_found = np.mean([f for _, f in rows])
        print(
            f"{label:12s} questions {len(rows)}  any gold quoted {any_hit:.3f}  gold quoted {mean_found:.3f} of {TOP}"
        )


main()
