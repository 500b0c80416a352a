"""SAGE segmenter with the real embedder: the shipped model, training end to end, the benchmark.

No database is involved; these tests use the real all-MiniLM-L6-v2 embedder on small slices of
the real bench data (held-out documents only).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner
from tests.support.data import BENCH


pytestmark = pytest.mark.skipif(
    not (BENCH / "dev" / "corpus").exists(), reason="needs the shared bench data"
)


def test_shipped_model_segments_held_out_documents(embedder):
    from kg_platform.config import Settings
    from kg_platform_lab.evaluation.segmentation import FixedSegmenter, evaluate_cuts
    from kg_platform.segmenting.sage import default_model_dir, load_model, load_segmenter
    from kg_platform_lab.sage.data import load_sage_data

    assert (default_model_dir() / "head.safetensors").stat().st_size < 3_000_000
    meta = load_model().meta
    settings = Settings()
    segmenter = load_segmenter(settings, embedder=embedder)
    assert segmenter.name == "sage"
    docs = load_sage_data(BENCH, seed=meta.get("seed", 13)).documents["test"][:6]
    cuts = []
    groups = segmenter.split(list(docs[0].sentences))
    assert [s for g in groups for s in g] == list(docs[0].sentences)  # covers the input in order
    assert all(groups)
    for doc in docs:
        cuts.append(segmenter.cuts(list(doc.sentences)))
    sage_pk, sage_wd = evaluate_cuts(docs, cuts)
    fixed = FixedSegmenter(settings.segment.chunk_tokens)
    fixed_pk, fixed_wd = evaluate_cuts(docs, [fixed.cuts(list(d.sentences)) for d in docs])
    # the learned cuts find real paragraph boundaries far better than blind packing
    assert sage_pk < fixed_pk and sage_wd < fixed_wd
    assert sage_pk < 0.3


def test_train_writes_a_loadable_artifact(tmp_path, embedder):
    from kg_platform.config import Settings
    from kg_platform.segmenting.sage import load_model, load_segmenter
    from kg_platform_lab.sage.train import train_sage

    bench = _write_fake_bench(tmp_path / "bench", n_questions=24)
    settings = Settings(cache_dir=tmp_path / "cache")
    result = train_sage(settings, bench, tmp_path / "model", epochs=2, hidden=16, embedder=embedder)
    model = load_model(tmp_path / "model")
    assert model.meta["threshold"] == result.threshold
    assert model.meta["metrics"]["train_pairs"] > 0 and model.meta["embedder_frozen"] is True
    assert list((tmp_path / "cache" / "sage").glob("sage-emb-*.npy"))
    seg = load_segmenter(settings, model_dir=tmp_path / "model", embedder=embedder)
    assert [s for g in seg.split(["One sentence here.", "Another one."]) for s in g] == [
        "One sentence here.",
        "Another one.",
    ]


def test_bench_segment_cli_json_schema(tmp_path):
    from kg_platform.cli.main import app

    out = tmp_path / "seg.json"
    result = CliRunner().invoke(
        app,
        ["lab", "bench", "segment", "--bench", str(BENCH), "--max-docs", "3", "--json", str(out)],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert set(report["methods"]) == {"sage", "texttiling", "similarity", "fixed"}
    for values in report["methods"].values():
        assert set(values) == {"pk", "windowdiff", "pairs_per_s"}
        assert all(isinstance(v, float) for v in values.values())
        assert 0.0 <= values["pk"] <= 1.0 and values["pairs_per_s"] > 0
    assert "Pk" in result.output and "texttiling" in result.output


def _write_fake_bench(root: Path, n_questions: int) -> Path:
    """A bench/ folder in the dev schema with ``n_questions`` questions of 4 paragraphs each."""
    dev = root / "dev"
    (dev / "corpus").mkdir(parents=True)
    rng = random.Random(0)
    topics = [
        "volcanoes erupt lava",
        "orchestras play symphonies",
        "rivers flood valleys",
        "bees make honey",
        "trains cross bridges",
        "chess players plan moves",
    ]
    corpus, questions = [], []
    for q in range(n_questions):
        paragraphs = []
        for j in range(4):
            doc_id = f"hotpotqa:{q:03d}{j}"
            topic = topics[(q + j) % len(topics)]
            sentences = [
                f"In story {q} part {j}, {topic} again and again." for _ in range(rng.randint(2, 4))
            ]
            sentences = [f"{s[:-1]} {i}." for i, s in enumerate(sentences)]
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
