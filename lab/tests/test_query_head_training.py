"""Training the late rerank's query head (``kgp lab rerank train-head``) without Neo4j: on
synthetic states where the untrained MaxSim prefers the wrong candidates, training lowers the
loss and lifts the positive; the same seed gives the same head; the exported ONNX model is the
torch head, under the names the product loads."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

torch = pytest.importorskip("torch")
ort = pytest.importorskip("onnxruntime")

from kg_platform_lab.evaluation.docqa import DocQuestion  # noqa: E402
from kg_platform_lab.rerank import query_head as qh  # noqa: E402
from kg_platform_lab.rerank.pools import Pool  # noqa: E402

DIM = qh.DIM


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    x = rng.standard_normal((n, DIM)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _synthetic(n_questions: int, seed: int = 0, n_candidates: int = 8):
    """Rows, pools and examples where the signal is in which pieces count.

    Each question has 2 informative pieces (sharing a direction ``d``) and 4 filler pieces. The
    positive candidate holds the informative pieces' states; most negatives hold all 4 filler
    pieces' states. Untrained, MaxSim averages the pieces equally, so the negatives score
    higher; the head's weights ``u`` (and ``A``) can learn to weigh the informative pieces."""
    rng = np.random.default_rng(seed)
    d = _unit(rng, 1)[0]
    rows, pools, examples = [], [], {}
    for q in range(n_questions):
        info = _unit(rng, 2) + 1.5 * d
        info /= np.linalg.norm(info, axis=1, keepdims=True)
        filler = _unit(rng, 4)
        q_tok = np.concatenate([info, filler, _unit(rng, 1)])  # the last piece: a stop word
        mask = np.array([True] * 6 + [False])
        positive = int(rng.integers(0, n_candidates))
        c_tok, texts = [], []
        for c in range(n_candidates):
            noise = _unit(rng, int(rng.integers(5, 12)))
            if c == positive:
                states = np.concatenate([info, noise])
                texts.append(f"The evidence sentence of question {q} is right here.")
            else:
                states = np.concatenate([filler, noise]) if c % 4 else noise
                texts.append(f"A distractor paragraph, candidate {c} of question {q}.")
            c_tok.append(rng.permutation(states).astype(np.float16))
        qid = f"q{q}"
        rows.append(
            qh.StateRow(
                dataset="toy",
                question_id=qid,
                strategy="hybrid",
                q_vec=_unit(rng, 1)[0],
                q_tok=q_tok.astype(np.float16),
                q_mask=mask,
                c_vec=_unit(rng, n_candidates),
                c_tok=c_tok,
            )
        )
        pools.append(
            Pool(
                dataset="toy",
                question_id=qid,
                strategy="hybrid",
                ids=[f"{qid}-c{c}" for c in range(n_candidates)],
                texts=texts,
                scores=[1.0 - c / n_candidates for c in range(n_candidates)],
                cosine=[0.0] * n_candidates,
                maxsim=[0.0] * n_candidates,
                strategy_ms=1.0,
            )
        )
        examples[("toy", qid)] = DocQuestion(
            id=qid,
            question="?",
            answer="",
            doc_id=f"paper-{q % 6}",
            title="",
            evidence_sets=[[texts[positive]]],
            document=Path("d.md"),
        )
    return rows, pools, examples


def test_lists_without_a_positive_or_of_positives_only_are_skipped():
    rows, pools, examples = _synthetic(4)
    pools[1].texts = ["nothing relevant in this candidate text"] * len(pools[1].texts)
    gold = examples[("toy", "q2")].evidence_sets[0][0]
    pools[2].texts = [gold] * len(pools[2].texts)
    lists = qh.training_lists(rows, qh.pool_index(pools), examples)
    assert len(lists) == 2
    assert all(int(item.positive.sum()) == 1 for item in lists)


def test_training_lowers_the_loss_and_ranks_the_positive_first_more_often():
    rows, pools, examples = _synthetic(48)
    index = qh.pool_index(pools)
    lists = qh.training_lists(rows, index, examples)
    assert len(lists) == 48
    untrained = qh.Head()
    before = qh.first_is_positive(untrained, lists)
    assert before < 0.5  # the filler-heavy negatives win while the pieces weigh the same
    messages: list[str] = []
    head = qh.train_head(rows, index, examples, epochs=6, lr=1e-2, log=messages.append)
    assert len(messages) == 6 and "loss" in messages[0]
    assert qh.mean_loss(head, lists) < 0.7 * qh.mean_loss(untrained, lists)
    assert qh.first_is_positive(head, lists) >= before + 0.3


def test_the_same_seed_gives_the_same_head_and_another_seed_another():
    rows, pools, examples = _synthetic(12)
    a = qh.train_head(rows, pools, examples, epochs=2, seed=3)
    b = qh.train_head(rows, pools, examples, epochs=2, seed=3)
    c = qh.train_head(rows, pools, examples, epochs=2, seed=4)
    assert torch.equal(a.A, b.A) and torch.equal(a.u, b.u)
    assert not torch.equal(a.A, c.A)


def test_training_does_not_reorder_the_callers_lists():
    rows, pools, examples = _synthetic(6)
    lists = qh.training_lists(rows, qh.pool_index(pools), examples)
    ids = [id(item) for item in lists]
    qh.train_head(rows, pools, examples, epochs=2, lists=lists)
    assert [id(item) for item in lists] == ids


def test_the_exported_model_is_the_torch_head_under_the_documented_names(tmp_path):
    rows, pools, examples = _synthetic(12)
    head = qh.train_head(rows, pools, examples, epochs=2, lr=1e-2)
    assert head.A.detach().abs().max() > 0 and head.u.detach().abs().max() > 0
    path = qh.export_onnx(head, tmp_path / "query-head.onnx")
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    assert [i.name for i in session.get_inputs()] == ["tokens"]
    assert [o.name for o in session.get_outputs()] == ["mapped", "weights"]
    rng = np.random.default_rng(7)
    for pieces in (1, 5, 23):  # axis 0 is dynamic
        tokens = _unit(rng, pieces)
        mapped, weights = session.run(None, {"tokens": tokens})
        assert mapped.dtype == np.float32 and mapped.shape == (pieces, DIM)
        assert weights.dtype == np.float32 and weights.shape == (pieces,)
        with torch.no_grad():
            t_mapped, t_weights = head.mapped(torch.from_numpy(tokens))
        assert np.abs(mapped - t_mapped.numpy()).max() < 1e-5
        assert np.abs(weights - t_weights.numpy()).max() < 1e-5
        assert np.allclose(np.linalg.norm(mapped, axis=1), 1.0, atol=1e-5)
        assert weights.sum() == pytest.approx(1.0, abs=1e-5)


def test_the_provenance_names_the_file_by_its_checksum(tmp_path):
    rows, pools, examples = _synthetic(4)
    head = qh.train_head(rows, pools, examples, epochs=1)
    path = qh.export_onnx(head, tmp_path / "query-head.onnx")
    record = qh.provenance_record(
        sets=[{"pools": "p.jsonl", "dataset": "toy", "corpus": "c", "source": "src"}],
        papers=6,
        questions=4,
        lists=4,
        strategies=["hybrid"],
        candidates=30,
        epochs=1,
        lr=1e-3,
        reg=1e-3,
        seed=0,
        train_seconds=0.5,
        command="kgp lab rerank train-head ...",
        states="int8",
    )
    body = json.loads(qh.write_provenance(path, record).read_text(encoding="utf-8"))
    # the product reads documents with the copy the head was trained on (head_states)
    assert body["states"] == "int8"
    assert body["file"] == "query-head.onnx"
    assert body["sha256"] == qh.file_sha256(path)
    assert body["base_model"]["name"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert body["training"]["epochs"] == 1 and body["training"]["torch"] == torch.__version__
    assert body["data"]["lists_trained"] == 4 and "src: 6 papers" in body["data"]["via"]


def test_the_held_half_check_trains_on_half_of_the_papers_and_scores_the_other(tmp_path):
    rows, pools, examples = _synthetic(24)
    halves = {qh.half_of(f"paper-{p}") for p in range(6)}
    assert halves == {0, 1}  # the toy papers fall in both halves
    messages: list[str] = []
    out = qh.held_half_check(
        rows, pools, examples, epochs=2, lr=1e-2, budgets=(20, 40), log=messages.append
    )
    held = sum(qh.half_of(ex.doc_id) == 1 for ex in examples.values())
    assert out["questions_held"] == held and out["lists_trained"] == len(rows) - held
    assert len(out["recall_before"]) == 2 and len(out["recall_after_epoch"]) == 2
    assert all(0.0 <= v <= 1.0 for v in out["recall_before"] + out["recall_after_epoch"][-1])
    assert len(messages) == 3


def _toy_dataset(root: Path, name: str) -> Path:
    folder = root / name
    (folder / "papers").mkdir(parents=True)
    (folder / "papers" / "p.md").write_text("# P\n\nSome text.\n", encoding="utf-8")
    row = {"id": "q0", "question": "?", "doc_id": "p", "evidence_sets": [["Some text."]]}
    (folder / "questions.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    return folder


def _said(result) -> str:
    """The command's error as one line (the CLI draws it wrapped in a box)."""
    return " ".join(re.sub(r"[\u2500-\u257f]", " ", result.output).split())


def test_the_command_refuses_sets_given_unevenly_out_of_order_or_twice(tmp_path):
    from kg_platform.cli.main import app

    pools_file = tmp_path / "pools.jsonl"
    pool = Pool("toy", "q0", "hybrid", ["a"], ["Some text."], [1.0], [0.0], [0.0], 1.0)
    pools_file.write_text(pool.to_json() + "\n", encoding="utf-8")
    toy, other = _toy_dataset(tmp_path, "toy"), _toy_dataset(tmp_path, "other")
    base = ["lab", "rerank", "train-head", "--out", str(tmp_path / "out")]
    runner = CliRunner()

    uneven = base + ["--pools", str(pools_file), "--pools", str(pools_file)]
    uneven += ["--dataset", str(toy), "--corpus", "c1", "--corpus", "c2"]
    result = runner.invoke(app, uneven)
    assert result.exit_code != 0
    assert "once per training set" in _said(result) and "1 --dataset" in _said(result)

    swapped = base + ["--pools", str(pools_file), "--dataset", str(other), "--corpus", "c"]
    result = runner.invoke(app, swapped)
    assert result.exit_code != 0 and "collected from toy, not from --dataset" in _said(result)

    other_strategy = base + ["--pools", str(pools_file), "--dataset", str(toy), "--corpus", "c"]
    result = runner.invoke(app, other_strategy + ["--strategy", "mog"])
    assert result.exit_code != 0 and "no pools of mog" in _said(result)

    twice = tmp_path / "twice.jsonl"
    twice.write_text((pool.to_json() + "\n") * 2, encoding="utf-8")
    result = runner.invoke(
        app, base + ["--pools", str(twice), "--dataset", str(toy), "--corpus", "c"]
    )
    assert result.exit_code != 0 and "given twice" in _said(result)

    fp16 = base + ["--pools", str(pools_file), "--dataset", str(toy), "--corpus", "c"]
    result = runner.invoke(app, fp16 + ["--states", "fp16"])
    assert result.exit_code != 0 and "none or int8" in _said(result)
    assert not (tmp_path / "out").exists()
