"""Train a query-side head over frozen MiniLM word-piece states (issue 31 item 3 probe).

score_j = a*cos(q', c_j) + b*sum_i w_i max_k q'_i . c_jk ;  q'_i = norm(q_i + q_i A), w = softmax(q_i u)
The candidates' states stay the bundled model's; only the question's side is mapped.
"""

import argparse
import hashlib
import pickle
import random
import time
from pathlib import Path
import numpy as np
import torch
from torch import nn
from kg_platform.retrieval.late_interaction import min_max
from kg_platform_lab.evaluation.docqa import load_docqa
from kg_platform_lab.evaluation.datasets import load_dataset
from kg_platform_lab.evaluation.metrics import normalise
from kg_platform_lab.rerank.fit import Scorer, order_by_score
from kg_platform_lab.rerank.pools import read_pools

torch.set_num_threads(2)


def to_t(row):
    q = torch.from_numpy(row["q_tok"].astype(np.float32))
    m = torch.from_numpy(np.asarray(row["q_mask"], bool))
    C = [torch.from_numpy(t) for t in row["c_tok"]]  # float16, unpadded
    row["c_tok_n"] = len(row["c_tok"])
    del row["c_tok"]
    return dict(q=q, m=m, qv=torch.from_numpy(row["q_vec"]), cv=torch.from_numpy(row["c_vec"]), C=C)


def padded(t):
    C = nn.utils.rnn.pad_sequence([c.float() for c in t["C"]], batch_first=True)
    lens = torch.tensor([len(c) for c in t["C"]])
    cm = torch.arange(C.shape[1])[None, :] < lens[:, None]
    return C, cm


class Head(nn.Module):
    def __init__(self, vec: bool, weights: bool, rank: int = 0, no_a: bool = False):
        super().__init__()
        self.rank = rank
        if no_a:
            self.A = nn.Parameter(torch.zeros(384, 384), requires_grad=False)
        elif rank:
            self.U = nn.Parameter(torch.randn(384, rank) * 0.01)
            self.V = nn.Parameter(torch.zeros(rank, 384))
            self.A = None
        else:
            self.A = nn.Parameter(torch.zeros(384, 384))
        self.B = nn.Parameter(torch.zeros(384, 384)) if vec else None
        self.u = nn.Parameter(torch.zeros(384)) if weights else None
        self.la = nn.Parameter(torch.tensor(3.0))
        self.lb = nn.Parameter(torch.tensor(3.0))

    def parts(self, t):
        q = t["q"][t["m"]]
        qa = nn.functional.normalize(q + q @ self.amat(), dim=-1)
        C, cm = padded(t)
        sims = torch.einsum("qd,cld->cql", qa, C).masked_fill(~cm[:, None, :], -1e4)
        best = sims.max(-1).values  # c x q
        w = (
            torch.softmax(q @ self.u, 0)
            if self.u is not None
            else torch.full((len(q),), 1 / len(q))
        )
        ms = best @ w
        qv = t["qv"]
        if self.B is not None:
            qv = nn.functional.normalize(qv + qv @ self.B, dim=-1)
        cos = t["cv"] @ qv
        return cos, ms

    def amat(self):
        return self.A if self.A is not None else self.U @ self.V

    def forward(self, t):
        cos, ms = self.parts(t)
        return self.la.exp() * cos + self.lb.exp() * ms


def labels(pool, ex, n):
    gold = {s for ann in ex.sentence_sets for par in ann for s in par if len(s) > 20}
    return [int(any(s in normalise(t) for s in gold)) for t in pool.texts[:n]]


def half_of(doc_id):
    return hashlib.sha256(doc_id.encode()).digest()[0] % 2


def recall(head, rows, tens, pools, scorer, late_weight=1.0, rows_out=False):
    out = []
    with torch.no_grad():
        for r, t in zip(rows, tens):
            cos, ms = head.parts(t) if head is not None else base_parts(t)
            s = min_max(cos.double().numpy()) + late_weight * min_max(ms.double().numpy())
            p = pools[(r["dataset"], r["question_id"], r["strategy"])]
            out.append(scorer.recall(p, order_by_score(s, len(p.ids))))
    if rows_out:
        return np.asarray(out)
    return np.mean(np.asarray(out), axis=0).round(4).tolist()


def base_parts(t):
    q = t["q"][t["m"]]
    C, cm = padded(t)
    sims = torch.einsum("qd,cld->cql", q, C).masked_fill(~cm[:, None, :], -1e4)
    return t["cv"] @ t["qv"], sims.max(-1).values.mean(-1)


def train(head, data, epochs, lr, reg, seed, log):
    rng = random.Random(seed)
    opt = torch.optim.Adam(head.parameters(), lr=lr)
    for ep in range(epochs):
        rng.shuffle(data)
        tot = 0.0
        for t, y in data:
            s = head(t)
            loss = torch.logsumexp(s, 0) - torch.logsumexp(s[y], 0)
            loss = loss + reg * (
                head.amat().pow(2).sum() + (head.B.pow(2).sum() if head.B is not None else 0)
            )
            opt.zero_grad()
            loss.backward()
            opt.step()
            tot += float(loss)
        log(f"epoch {ep} loss {tot / len(data):.4f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", nargs="+", type=Path)
    ap.add_argument("--check", nargs="*", type=Path, default=[])
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--reg", type=float, default=1e-4)
    ap.add_argument("--vec", action="store_true")
    ap.add_argument("--weights", action="store_true")
    ap.add_argument("--halves", action="store_true")
    ap.add_argument("--rank", type=int, default=0)
    ap.add_argument("--no-a", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--save", type=Path)
    ap.add_argument("--check-halves", action="store_true")
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    examples = {}
    for d in [
        Path("/work/data/ldtrain250"),
        Path("/work/data/ldtrain-rest"),
        Path("../shared/bench/longdoc"),
    ]:
        examples.update({(d.name, q.id): q for q in load_docqa(d)})
    for f in sorted(Path("../shared/bench/dev").glob("*.jsonl")):
        examples.update({(f.stem, q.id): q for q in load_dataset(f)})
    pools = {}
    for f in [
        "train",
        "train-rest",
        "longdoc",
        "dev-hotpotqa",
        "dev-2wikimultihopqa",
        "dev-musique",
    ]:
        if not Path(f"/work/data/pools/{f}.jsonl").exists():
            continue
        for p in read_pools(Path(f"/work/data/pools/{f}.jsonl")):
            pools[(p.dataset, p.question_id, p.strategy)] = p
    scorer = Scorer(examples, [512, 1024])

    def log(m: str) -> None:
        print(m, flush=True)

    rows, tens = [], []
    for f in a.train:
        for r in pickle.load(f.open("rb")):
            tens.append(to_t(r))
            rows.append(r)
    data, hold_rows, hold_tens = [], [], []
    for r, t in zip(rows, tens):
        ex = examples[(r["dataset"], r["question_id"])]
        if a.halves and half_of(ex.doc_id) == 1:
            hold_rows.append(r)
            hold_tens.append(t)
            continue
        y = torch.tensor(
            labels(pools[(r["dataset"], r["question_id"], r["strategy"])], ex, r["c_tok_n"]),
            dtype=torch.bool,
        )
        if y.any() and not y.all():
            data.append((t, y))
    log(f"train lists {len(data)}; held-out train lists {len(hold_rows)}")
    head = Head(a.vec, a.weights, a.rank, a.no_a)
    if hold_rows:
        log(f"held half, base {recall(None, hold_rows, hold_tens, pools, scorer)}")
    t0 = time.time()
    for ep in range(a.epochs):
        train(head, data, 1, a.lr, a.reg, a.seed + ep, log)
        if hold_rows:
            log(f"  held half after {ep + 1}: {recall(head, hold_rows, hold_tens, pools, scorer)}")
    log(
        f"trained {time.time() - t0:.0f}s  la {head.la.item():.2f} lb {head.lb.item():.2f} |A| {head.amat().norm().item():.2f}"
    )
    for f in a.check if not a.halves or a.check_halves else []:
        cr = pickle.load(f.open("rb"))
        ct = [to_t(r) for r in cr]
        b = recall(None, cr, ct, pools, scorer, rows_out=True)
        h = recall(head, cr, ct, pools, scorer, rows_out=True)
        log(
            f"check {f.name}: base {b.mean(0).round(4).tolist()} head {h.mean(0).round(4).tolist()}"
        )
        if "longdoc" in f.name:
            one = np.asarray(
                [len(examples[(r["dataset"], r["question_id"])].sentence_sets) == 1 for r in cr]
            )
            log(
                f"   one annotator ({one.sum()}): base {b[one].mean(0).round(4).tolist()} head {h[one].mean(0).round(4).tolist()}; several: base {b[~one].mean(0).round(4).tolist()} head {h[~one].mean(0).round(4).tolist()}"
            )
    if a.save:
        torch.save(head.state_dict(), a.save)


if __name__ == "__main__":
    main()
