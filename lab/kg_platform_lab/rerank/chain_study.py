"""The chain-rerank study (lab/results/2026-12-02/chain-rank): where the default path loses the
gold bridge passages, and which chain-aware final ranking wins them back.

``collect`` runs the default path's strategy (``auto``) on each question of a QA file and keeps,
per question, its first candidates with everything a chain-aware ranking could read: the late
rerank's cosine and MaxSim, the strategy's score, each candidate's source title and bridging
entities (``retrieval/chain_links``), the walk's entity hops, and, for the first anchors of the
shipped rerank, the candidates' cosine and MaxSim against the question read together with the
anchor's text (MDR's second-hop query). ``score`` replays rankings offline over those records
with the harness's own cut and scorer, so the variants are compared on exactly what
``kgp lab eval`` would score.

    python -m kg_platform_lab.rerank.chain_study collect -d DATASET --corpus C --out F.jsonl
    python -m kg_platform_lab.rerank.chain_study study F1.jsonl F2.jsonl F3.jsonl
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from kg_platform.retrieval.base import RetrievalContext, get_strategy
from kg_platform_lab.rerank.chain_rerank import Candidate, ChainWeights, chain_order, link_matrices
from kg_platform.retrieval.rerank.late_interaction import (
    _token_states,
    combine,
    content_pieces,
    late_scores,
    maxsim,
    question_embedder,
)
from kg_platform.retrieval.rerank.weights import candidates_for, weights_for
from kg_platform_lab.evaluation.datasets import load_dataset
from kg_platform_lab.queries import lab_read
from kg_platform_lab.evaluation.harness import _tokens
from kg_platform_lab.evaluation.metrics import Ranked, dedupe, score_question

HEAD = 30
ANCHORS = 3
#: (title, entity, hop, anchors, entity's candidates): the grid the rule was written for, cut to
#: what the loaded machine could score in time (README)
GRID = [
    *itertools.product((0.25, 0.5, 1.0), (0.0, 0.5), (0.0,), (1, 2), (16,)),
    *itertools.product((0.0,), (0.25, 0.5), (0.0,), (1, 2), (16,)),
    *itertools.product((0.0, 0.5), (0.0,), (0.5,), (1, 2), (16,)),
    *itertools.product((0.5, 1.0), (0.0,), (0.0,), (2,), (30,)),
]


def collect(dataset: Path, corpus: str, out: Path, limit: int | None) -> None:
    from kg_platform.config import get_settings
    from kg_platform.sdk.platform import KnowledgePlatform

    examples = [ex for ex in load_dataset(dataset) if ex.gold][:limit]
    with KnowledgePlatform(get_settings()) as kp, out.open("w", encoding="utf-8") as fh:
        ctx = RetrievalContext(kp.graph, kp.embedder, kp.settings, kp.corpus_name(corpus))
        auto = get_strategy("auto", ctx)
        for i, ex in enumerate(examples):
            t0 = time.perf_counter()
            items = list(auto.retrieve(ex.question, 40))
            chosen = getattr(auto, "chosen", None) or "auto"
            head = items[:HEAD]
            ids = [it.id for it in head]
            _, cos, sim = late_scores(ex.question, [it.text for it in head], ctx, ids=ids)
            rows = {
                r["id"]: r
                for r in lab_read(
                    ctx.graph,
                    "evaluation/chain_links",
                    ids=ids,
                    max_degree=kp.settings.tuning.entity_graph.max_degree,
                )
            }
            refs = {
                r["id"]: r
                for r in lab_read(ctx.graph, "evaluation/chain_refs", ids=list(dict.fromkeys(ids)))
            }
            n = candidates_for(chosen, ctx.settings)
            shipped = combine(
                weights_for(chosen, ctx.settings),
                cos[:n],
                sim[:n],
                np.asarray([it.score for it in head[:n]], dtype=np.float64),
            )
            top = sorted(range(len(shipped)), key=lambda j: (-round(float(shipped[j]), 9), j))
            from kg_platform.retrieval.rerank.late_interaction import rerank_embedder, reading_texts

            cand_states = _token_states(
                rerank_embedder(ctx), reading_texts(ids, [it.text for it in head], ctx)
            )
            hop_cos, hop_sim = [], []
            for a in top[:ANCHORS]:
                query = f"{ex.question}\n{head[a].text}"
                qv, qt, qo = _token_states(question_embedder(ctx), [query])[0]
                qt = qt[content_pieces(query, qo)]
                hop_cos.append([float(vec @ qv) for vec, _, _ in cand_states])
                hop_sim.append([maxsim(qt, tok) for _, tok, _ in cand_states])
            ms = (time.perf_counter() - t0) * 1000
            record = {
                "id": ex.id,
                "question": ex.question,
                "chosen": chosen,
                "n": n,
                "ms": ms,
                "anchors": top[:ANCHORS],
                "hop_cos": hop_cos,
                "hop_sim": hop_sim,
                "items": [
                    {
                        "id": it.id,
                        "text": it.text,
                        "score": float(it.score),
                        "cos": float(cos[j]),
                        "sim": float(sim[j]),
                        "title": (rows.get(it.id) or {}).get("title") or it.source_title or "",
                        "entities": [e for e in (rows.get(it.id) or {}).get("entities", []) if e],
                        "hops": [k for k in it.breakdown if k.startswith(("entity:", "seed:"))],
                        "source": (refs.get(it.id) or {}).get("source") or it.source_id or "",
                        "refs": list((refs.get(it.id) or {}).get("refs") or []),
                    }
                    for j, it in enumerate(head)
                ],
                "tail": [{"id": it.id, "text": it.text} for it in items[HEAD:]],
            }
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
            print(
                f"{dataset.stem} {i + 1}/{len(examples)} {ms:.0f} ms", file=sys.stderr, flush=True
            )


# ----------------------------------------------------------------------------------- offline
def _gold(dataset_name: str) -> dict[str, Any]:
    path = Path("/work/shared/bench/dev") / f"{dataset_name}.jsonl"
    return {ex.id: ex.gold for ex in load_dataset(path)}


def _score(order: list[dict[str, str]], gold: Any, budget: int = 512) -> tuple[float, float]:
    """Paragraph recall and "all supporting found" of ``order`` at ``budget`` tokens: the
    harness's dedupe, cut and scorer (metrics.py), with each text's normal form and token count
    kept on its record (the grid scores the same texts thousands of times)."""
    from kg_platform_lab.evaluation.harness import _truncate
    from kg_platform_lab.evaluation.metrics import normalise

    seen_ids: set[str] = set()
    seen: set[str] = set()
    covered: set[int] = set()
    left = budget
    for r in order:
        if "_norm" not in r:
            r["_norm"] = normalise(r["text"])
            r["_tokens"] = _tokens(r["text"])
            r["_facts"] = [i for i, f in enumerate(gold) if f.covered_by(r["_norm"])]
        if r["id"] in seen_ids or r["_norm"] in seen:
            continue
        seen_ids.add(r["id"])
        seen.add(r["_norm"])
        if r["_tokens"] <= left:
            covered.update(r["_facts"])
            left -= r["_tokens"]
        else:
            if left > 0:
                cut = normalise(_truncate(r["text"], left))
                covered.update(i for i, f in enumerate(gold) if f.covered_by(cut))
            break
        if left == 0:
            break
    paragraphs = {f.paragraph for f in gold}
    found = {gold[i].paragraph for i in covered}
    return len(found) / len(paragraphs), 1.0 if len(covered) == len(gold) else 0.0


def candidates_of(rec: dict[str, Any]) -> list[Candidate]:
    return [
        Candidate(
            id=it["id"],
            text=it["text"],
            title=it["title"],
            entities=tuple(it["entities"]),
        )
        for it in rec["items"]
    ]


def order_for(
    rec: dict[str, Any], w: ChainWeights | None, n: int | None = None
) -> list[dict[str, str]]:
    """The ranking a variant gives a record: ``w=None`` the shipped rerank."""
    from kg_platform.retrieval.rerank.late_interaction import min_max

    n = n or rec["n"]
    items = rec["items"]
    head, tail = items[:n], items[n:] + rec["tail"]
    lw = weights_for(rec["chosen"], _SETTINGS)
    base = combine(
        lw,
        np.asarray([it["cos"] for it in head]),
        np.asarray([it["sim"] for it in head]),
        np.asarray([it["score"] for it in head]),
    )
    if w is None or len(head) < 2:
        idx = sorted(range(len(head)), key=lambda j: (-round(float(base[j]), 9), j))
    else:
        if "_links" not in rec:
            rec["_links"] = link_matrices(rec["question"], candidates_of(rec))
        title, entity = (m[:n, :n] for m in rec["_links"])
        hop = None
        anchors = None
        if w.hop and rec["hop_cos"]:
            # the collected hop rows are for the shipped rerank's anchors (the first n)
            hop_c = np.asarray(rec["hop_cos"])[:, :n]
            hop_s = np.asarray(rec["hop_sim"])[:, :n]
            hop = np.stack([min_max(hop_c[a]) + min_max(hop_s[a]) for a in range(len(hop_c))])
            anchors = rec["anchors"] if n == rec["n"] else None
            if anchors is None:
                hop = None
        if isinstance(w, Reserve):
            row = None
            if w.pick == "hop" and rec["hop_cos"] and n == rec["n"]:
                row = min_max(np.asarray(rec["hop_cos"][0][:n])) + min_max(
                    np.asarray(rec["hop_sim"][0][:n])
                )
            idx = reserve_order(base, title, entity, w, row)
        else:
            idx = chain_order(base, title, entity, w, hop=hop, anchors=anchors)
    return [head[j] for j in idx] + tail


_SETTINGS: Any = None


class Reserve:
    """The "reserved slot" variant: the best-scored candidate linked (by ``links``: title,
    entity or either) to the late rerank's first candidate moves up to position ``slot``
    (1-based) when it sits below it; everything else keeps the late order."""

    def __init__(self, slot: int, links: str, pick: str = "late") -> None:
        self.slot, self.links, self.pick, self.hop = slot, links, pick, 0.0
        self.__dict__["kind"] = "reserve"


def reserve_order(
    base: np.ndarray,
    title: np.ndarray,
    entity: np.ndarray,
    w: Reserve,
    hop: np.ndarray | None = None,
) -> list[int]:
    order = sorted(range(len(base)), key=lambda j: (-round(float(base[j]), 9), j))
    top = order[0]
    link = {"title": title, "entity": entity, "either": np.maximum(title, entity)}[w.links][top]
    linked = [j for j in order[1:] if link[j]]
    if w.pick == "hop" and hop is not None:
        linked.sort(key=lambda j: -float(hop[j]))
    if linked and order.index(linked[0]) > w.slot - 1:
        order.remove(linked[0])
        order.insert(w.slot - 1, linked[0])
    return order


def study(files: list[Path]) -> None:
    global _SETTINGS
    from kg_platform.config import get_settings

    _SETTINGS = get_settings()
    data = {}
    for f in files:
        recs = [json.loads(line) for line in f.open(encoding="utf-8")]
        name = f.stem
        data[name] = (recs, _gold(name))
    # 1. where the gold is lost
    for name, (recs, gold) in data.items():
        stats = {
            "n": len(recs),
            "shipped_pr": 0.0,
            "shipped_all": 0.0,
            "pool_pr_16": 0.0,
            "pool_pr_30": 0.0,
            "pool_all_30": 0.0,
            "chosen_entity": 0,
        }
        for rec in recs:
            g = gold[rec["id"]]
            pr, al = _score(order_for(rec, None), g)
            stats["shipped_pr"] += pr / len(recs)
            stats["shipped_all"] += al / len(recs)
            for depth in (16, 30):
                s = score_question(
                    dedupe([Ranked(i["id"], i["text"]) for i in rec["items"][:depth]]), g, _tokens
                )
                stats[f"pool_pr_{depth}"] += s.paragraph_recall / len(recs)
                if depth == 30:
                    stats["pool_all_30"] += s.all_supporting_found / len(recs)
            stats["chosen_entity"] += rec["chosen"] == "entity"
        print(name, json.dumps({k: round(v, 3) for k, v in stats.items()}))


def grid(files: list[Path], out: Path | None) -> None:
    global _SETTINGS
    from kg_platform.config import get_settings

    _SETTINGS = get_settings()
    data = {}
    for f in files:
        recs = [json.loads(line) for line in f.open(encoding="utf-8")]
        data[f.stem] = (recs, _gold(f.stem))
    weights: list[Any] = [None]
    weights += [
        (ChainWeights(title=t, entity=e, hop=h, anchors=a), n)
        for t, e, h, a, n in GRID
        if t or e or h
    ]
    weights += [
        (Reserve(2, links, pick), 16)
        for pick in ("late", "hop")
        for links in ("title", "entity", "either")
    ]
    table = []
    for entry in weights:
        w, depth = (None, None) if entry is None else entry
        row: dict[str, Any] = {"w": None if w is None else {**w.__dict__, "n": depth}}
        for name, (recs, gold) in data.items():
            pr = al = 0.0
            for rec in recs:
                n = depth if depth and rec["chosen"] == "entity" else None
                p, a_ = _score(order_for(rec, w, n), gold[rec["id"]])
                pr += p / len(recs)
                al += a_ / len(recs)
            row[name] = [round(pr, 4), round(al, 4)]
        table.append(row)
        print(json.dumps(row), flush=True)
    if out:
        out.write_text(json.dumps(table, indent=1))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("-d", "--dataset", type=Path, required=True)
    c.add_argument("--corpus", required=True)
    c.add_argument("--out", type=Path, required=True)
    c.add_argument("--limit", type=int)
    s = sub.add_parser("study")
    s.add_argument("files", nargs="+", type=Path)
    g = sub.add_parser("grid")
    g.add_argument("files", nargs="+", type=Path)
    g.add_argument("--out", type=Path)
    args = p.parse_args(argv)
    if args.cmd == "collect":
        collect(args.dataset, args.corpus, args.out, args.limit)
    elif args.cmd == "study":
        study(args.files)
    else:
        grid(args.files, args.out)


if __name__ == "__main__":
    main()
