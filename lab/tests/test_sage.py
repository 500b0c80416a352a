"""SAGE segmentation: pair labels, features, threshold cuts, artifact round trip, Pk/WindowDiff."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from kg_platform.errors import ConfigError
from kg_platform_lab.evaluation.segmentation import (
    FixedSegmenter,
    TextTilingSegmenter,
    boundaries,
    calibrate_threshold,
    cuts_to_sizes,
    pk,
    window_k,
    windowdiff,
)
from kg_platform.segmenting.sage import (
    BoundaryModel,
    SemanticSegmenter,
    cut_by_scores,
    groups_from_cuts,
    load_model,
    pack_coarse,
    pair_features,
    sage_cuts,
    save_model,
)
from kg_platform_lab.sage.data import (
    Paragraph,
    SegDocument,
    build_pairs,
    load_sage_data,
    split_sentences,
)

# --------------------------------------------------------------------------- data


def _para(article: str, ord_: int, n: int) -> Paragraph:
    sentences = tuple(f"{article} p{ord_} s{i}." for i in range(n))
    return Paragraph(f"{article}#{ord_}", article, ord_, sentences, "test")


def _positions(sentence: str) -> tuple[str, int, int]:
    article, p, s = sentence.rstrip(".").split()
    return article, int(p[1:]), int(s[1:])


def test_pair_labels_follow_paragraph_structure():
    paragraphs = [_para("A", 0, 4), _para("A", 1, 3), _para("B", 0, 5), _para("C", 0, 2)]
    pairs = build_pairs(paragraphs, seed=1)
    positives = [p for p in pairs if p.label == 1]
    negatives = [p for p in pairs if p.label == 0]
    # every consecutive pair inside a paragraph, and nothing else, is positive
    assert len(positives) == 3 + 2 + 4 + 1
    for pair in positives:
        a1, p1, s1 = _positions(pair.s1)
        a2, p2, s2 = _positions(pair.s2)
        assert (a1, p1) == (a2, p2) and s2 == s1 + 1 and pair.kind == "inside"
    assert len(negatives) == len(positives)  # balanced
    boundary = [p for p in negatives if p.kind == "boundary"]
    assert [(p.s1, p.s2) for p in boundary] == [("A p0 s3.", "A p1 s0.")]
    for pair in negatives:
        a1, p1, _ = _positions(pair.s1)
        a2, p2, _ = _positions(pair.s2)
        assert (a1, p1) != (a2, p2)  # a negative never joins two sentences of one paragraph
        if pair.kind == "cross":
            assert a1 != a2


def test_pair_generation_is_deterministic_and_capped():
    paragraphs = [_para(a, o, 4) for a in "ABCDEFG" for o in range(3)]
    assert build_pairs(paragraphs, seed=7) == build_pairs(paragraphs, seed=7)
    assert build_pairs(paragraphs, seed=7) != build_pairs(paragraphs, seed=8)
    capped = build_pairs(paragraphs, seed=7, max_pairs=20)
    assert len(capped) == 20 and sum(p.label for p in capped) == 10


def test_split_sentences_keeps_abbreviations_and_initials():
    text = "J. R. R. Tolkien wrote books. Dr. Smith met him in the U.S. Army. Was it 1917? Yes."
    assert split_sentences(text) == [
        "J. R. R. Tolkien wrote books.",
        "Dr. Smith met him in the U.S. Army.",
        "Was it 1917?",
        "Yes.",
    ]


def _write_fake_bench(root, n_questions=30):
    dev = root / "dev"
    (dev / "corpus").mkdir(parents=True)
    rng = random.Random(0)
    corpus, questions = [], []
    for q in range(n_questions):
        paragraphs = []
        for j in range(4):
            doc_id = f"hotpotqa:{q:03d}{j}"
            sentences = [f"Topic {q} {j} sentence {i} is here." for i in range(rng.randint(2, 4))]
            corpus.append(
                {
                    "doc_id": doc_id,
                    "dataset": "hotpotqa",
                    "title": f"T{q}-{j}",
                    "text": " ".join(sentences),
                    "sentences": sentences,
                }
            )
            paragraphs.append(
                {
                    "idx": j,
                    "title": f"T{q}-{j}",
                    "sentences": sentences,
                    "is_supporting": False,
                    "doc_id": doc_id,
                }
            )
        questions.append({"id": f"q{q}", "paragraphs": paragraphs})
    (dev / "corpus" / "hotpotqa.jsonl").write_text("\n".join(json.dumps(r) for r in corpus))
    (dev / "hotpotqa.jsonl").write_text("\n".join(json.dumps(r) for r in questions))
    return root


def test_split_holds_out_whole_documents(tmp_path):
    bench = _write_fake_bench(tmp_path)
    data = load_sage_data(bench, seed=3, include_documents=False)
    again = load_sage_data(bench, seed=3, include_documents=False)
    assert data == again
    train_keys = {p.key for p in data.paragraphs["train"]}
    for split in ("val", "test"):
        assert data.documents[split], f"no {split} documents"
        held = {p.key for p in data.paragraphs[split]}
        assert not held & train_keys
        for doc in data.documents[split]:
            assert sum(doc.sizes) == len(doc.sentences)
            assert not set(doc.sentences) & {
                s for p in data.paragraphs["train"] for s in p.sentences
            }


# --------------------------------------------------------------------------- model


def test_pair_features_are_x1_x2_diff_prod():
    x1 = np.array([[1.0, 2.0]], dtype=np.float32)
    x2 = np.array([[3.0, -1.0]], dtype=np.float32)
    assert pair_features(x1, x2).tolist() == [[1.0, 2.0, 3.0, -1.0, -2.0, 3.0, 3.0, -2.0]]
    with pytest.raises(ValueError):
        pair_features(x1, np.zeros((1, 3)))


def test_head_reads_the_same_features():
    import torch

    model = BoundaryModel.new(4, hidden=8)
    model.head.eval()  # no dropout
    rng = np.random.default_rng(0)
    x1, x2 = rng.normal(size=(5, 4)).astype(np.float32), rng.normal(size=(5, 4)).astype(np.float32)
    feats = torch.from_numpy(pair_features(x1, x2))
    expected = torch.sigmoid(model.head.net(feats)).squeeze(-1).detach().numpy()
    assert np.allclose(model.score_pairs(x1, x2, batch_size=2), expected, atol=1e-6)


def test_artifact_round_trip(tmp_path):
    model = BoundaryModel.new(6, hidden=16)
    model.meta["threshold"] = 0.42
    rng = np.random.default_rng(1)
    x1, x2 = rng.normal(size=(9, 6)).astype(np.float32), rng.normal(size=(9, 6)).astype(np.float32)
    save_model(model, tmp_path / "m")
    loaded = load_model(tmp_path / "m")
    assert loaded.meta["threshold"] == 0.42 and loaded.dim == 6
    assert np.allclose(loaded.score_pairs(x1, x2), model.score_pairs(x1, x2), atol=5e-3)
    save_model(loaded, tmp_path / "m2")
    assert (tmp_path / "m" / "head.safetensors").read_bytes() == (
        tmp_path / "m2" / "head.safetensors"
    ).read_bytes()


def test_missing_artifact_says_how_to_train(tmp_path):
    with pytest.raises(ConfigError, match="kgp lab segmenter train"):
        load_model(tmp_path / "nothing")


# --------------------------------------------------------------------------- cutting


def test_threshold_cut_on_hand_made_scores():
    scores = [0.9, 0.2, 0.6, 0.54, 0.99]
    assert cut_by_scores(scores, 0.55) == [1, 3]
    assert groups_from_cuts(list("abcdef"), [1, 3]) == [["a", "b"], ["c", "d"], ["e", "f"]]
    assert groups_from_cuts(list("abc"), []) == [["a", "b", "c"]]


def test_pack_coarse_keeps_sentences_whole():
    assert pack_coarse([100, 200, 150, 50, 500, 10], 400) == [(0, 2), (2, 4), (4, 5), (5, 6)]
    with pytest.raises(ConfigError):
        pack_coarse([1], 0)


class _FixedScores:
    """A stand-in head with hand-made scores (the threshold logic is what is tested)."""

    dim = 2
    meta: dict = {}

    def __init__(self, scores):
        self.scores = np.asarray(scores, dtype=np.float32)

    def score_pairs(self, x1, x2, *, batch_size=512):
        assert len(x1) == len(self.scores)
        return self.scores


def _segmenter(scores, coarse_tokens, mode):
    return SemanticSegmenter(
        _FixedScores(scores),
        lambda texts: np.ones((len(texts), 2), np.float32),
        threshold=0.5,
        coarse_tokens=coarse_tokens,
        coarse_mode=mode,
        count_tokens=lambda texts: [10] * len(texts),
    )


def test_segmenter_greedy_mode_keeps_coarse_boundaries():
    sentences = [f"s{i}" for i in range(6)]
    segmenter = _segmenter([0.9, 0.1, 0.8, 0.9, 0.7], 40, "greedy")
    # coarse chunks of 4 sentences (40 tokens) end after s3; the model cuts after s1
    assert segmenter.cuts(sentences) == [1, 3]
    assert segmenter.split(sentences) == [["s0", "s1"], ["s2", "s3"], ["s4", "s5"]]
    assert segmenter.name == "sage"
    assert segmenter.split(["only"]) == [["only"]]


def test_segmenter_adaptive_mode_splits_long_chunks_at_weakest_pair():
    sentences = [f"s{i}" for i in range(6)]
    # model cut after s1; s2..s5 = 40 tokens fits 40, so no size cut
    assert _segmenter([0.9, 0.1, 0.8, 0.9, 0.7], 40, "adaptive").cuts(sentences) == [1]
    # with l = 30, s2..s5 is too long and splits at its lowest pair (0.7, after s4)
    assert _segmenter([0.9, 0.1, 0.8, 0.9, 0.7], 30, "adaptive").split(sentences) == [
        ["s0", "s1"],
        ["s2", "s3", "s4"],
        ["s5"],
    ]
    # every chunk respects the bound whatever the scores
    scores = list(np.random.default_rng(0).uniform(0.6, 1.0, 19))
    cuts = sage_cuts(scores, [10] * 20, 0.5, 35)
    assert all(size * 10 <= 35 for size in cuts_to_sizes(cuts, 20))
    with pytest.raises(ConfigError):
        _segmenter([0.5], 10, "nonsense")


# --------------------------------------------------------------------------- metrics


def test_pk_and_windowdiff_on_hand_made_segmentations():
    # ref [2,2,2]: k = 1, r = 0 1 0 1 0; hyp [3,3]: h = 0 0 1 0 0 -> 3 of 5 windows differ
    assert pk([2, 2, 2], [3, 3]) == pytest.approx(0.6)
    assert windowdiff([2, 2, 2], [3, 3]) == pytest.approx(0.6)
    # ref [4,4]: k = 2; hyp [3,1,4] has two boundaries in one window: WindowDiff counts it, Pk not
    assert window_k([4, 4]) == 2
    assert pk([4, 4], [3, 1, 4]) == pytest.approx(1 / 6)
    assert windowdiff([4, 4], [3, 1, 4]) == pytest.approx(2 / 6)
    assert pk([3, 5, 2], [3, 5, 2]) == 0.0 and windowdiff([3, 5, 2], [3, 5, 2]) == 0.0
    with pytest.raises(ValueError):
        pk([2, 2], [3])


def test_metrics_agree_with_nltk():
    from nltk.metrics.segmentation import pk as nltk_pk
    from nltk.metrics.segmentation import windowdiff as nltk_wd

    rng = random.Random(0)

    def sizes(n):
        out = []
        while n > 0:
            out.append(min(n, rng.randint(1, 6)))
            n -= out[-1]
        return out

    for _ in range(100):
        n = rng.randint(6, 40)
        ref, hyp = sizes(n), sizes(n)
        k = window_k(ref)
        r = "".join(map(str, boundaries(ref)))
        h = "".join(map(str, boundaries(hyp)))
        assert pk(ref, hyp) == pytest.approx(nltk_pk(r, h, k=k))
        assert windowdiff(ref, hyp) == pytest.approx(nltk_wd(r, h, k))


def test_cuts_to_sizes_and_threshold_calibration():
    assert cuts_to_sizes([1, 3], 6) == [2, 2, 2]
    assert cuts_to_sizes([], 3) == [3]
    doc = SegDocument("d", tuple("abcdef"), (2, 2, 2))
    scores = [np.array([0.9, 0.3, 0.8, 0.4, 0.7])]
    t, err = calibrate_threshold([doc], scores, [0.2, 0.35, 0.5, 0.75])
    assert t == 0.5 and err == 0.0


def test_baselines_cut_sentences():
    fixed = FixedSegmenter(20, count_tokens=lambda texts: [10] * len(texts))
    assert fixed.cuts([f"s{i}" for i in range(5)]) == [1, 3]
    topic_a = [
        f"The volcano erupted lava and ash over the island village number {i} today."
        for i in range(8)
    ]
    topic_b = [
        f"The orchestra performed a symphony with violins and cellos in concert hall {i}."
        for i in range(8)
    ]
    cuts = TextTilingSegmenter(w=6, k=3).cuts(topic_a + topic_b)
    assert all(0 <= c < 15 for c in cuts)
    assert 7 in cuts


def test_numpy_head_makes_the_torch_heads_decisions(tmp_path):
    """Inference without torch: the loaded (numpy) head scores like the trained torch head, so
    the cuts at the shipped threshold are the same."""
    pytest.importorskip("torch", reason="needs the train extra to build the reference head")
    from kg_platform.segmenting.sage import NumpyBoundaryHead

    from safetensors.torch import load_file

    from kg_platform.segmenting.sage import default_model_dir

    loaded = load_model()  # the shipped model
    assert isinstance(loaded.head, NumpyBoundaryHead)
    torch_ref = BoundaryModel.new(loaded.dim, hidden=int(loaded.meta["hidden"]))
    torch_ref.head.load_state_dict(
        {k: v.float() for k, v in load_file(str(default_model_dir() / "head.safetensors")).items()}
    )
    rng = np.random.default_rng(3)
    x = rng.normal(size=(300, 384)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    ours, theirs = (
        loaded.score_pairs(x[:-1], x[1:], batch_size=64),
        torch_ref.score_pairs(x[:-1], x[1:]),
    )
    assert np.abs(ours - theirs).max() < 1e-5
    threshold = 0.44  # the calibrated default (segment.sage_threshold)
    cuts = cut_by_scores(theirs, threshold)
    assert 0 < len(cuts) < len(theirs), "the pairs must fall on both sides of the threshold"
    assert cut_by_scores(ours, threshold) == cuts


def test_shipped_model_loads_without_torch():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'torch' or name.startswith('torch.'):\n"
        "            raise ImportError('torch is blocked in this test')\n"
        "sys.meta_path.insert(0, Block())\n"
        "import numpy as np\n"
        "from kg_platform.segmenting.sage import load_model\n"
        "m = load_model()\n"
        "x = np.eye(384, dtype=np.float32)[:5]\n"
        "s = m.score_pairs(x[:-1], x[1:])\n"
        "assert s.shape == (4,) and ((s >= 0) & (s <= 1)).all(), s\n"
        "assert 'torch' not in sys.modules\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
