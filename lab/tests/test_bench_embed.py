"""``kgp lab bench embed`` times the same texts at each ``embedding.batch_tokens`` value and
unbounded, reports speed-ups against the unbounded run, and checks the vectors did not change.
(No wall-clock assertion: only that every figure is there and consistent.)"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from kg_platform.config import Settings
from kg_platform_lab.bench.embed import (
    CHUNK_WORDS,
    bench_texts,
    format_embed_bench,
    run_embed_bench,
)
from tests.support.data import DEV

QA_FILE = DEV / "hotpotqa.jsonl"

needs_bench = pytest.mark.skipif(not QA_FILE.exists(), reason="needs the shared bench data")


@needs_bench
def test_the_workloads_hold_the_same_text_as_paragraphs_and_as_chunk_sized_windows() -> None:
    texts = bench_texts(Settings(), QA_FILE, 3)
    assert texts["paragraphs"]
    words = " ".join(texts["paragraphs"]).split()
    assert " ".join(texts["chunks"]).split() == words
    assert all(len(chunk.split()) <= CHUNK_WORDS for chunk in texts["chunks"])


@needs_bench
def test_every_value_is_timed_against_unbounded_calls_and_vectors_do_not_change() -> None:
    out = run_embed_bench(Settings(), qa_file=QA_FILE, limit=3, values=(64, 300), repeats=1)
    assert set(out["seconds"]) == {"unbounded", "64", "300"}
    assert set(out["speedup_vs_unbounded"]) == {"64", "300"}
    for key, ups in out["speedup_vs_unbounded"].items():
        for name, up in ups.items():
            took = out["seconds"][key][name]
            assert took > 0 and up == round(out["seconds"]["unbounded"][name] / took, 2)
    assert out["texts"]["rerank_lists"] >= 1 and out["max_vector_difference"] < 1e-5
    lines = format_embed_bench(out)
    assert any(line.strip().startswith("64") and "x)" in line for line in lines)


def test_the_command_refuses_values_that_are_not_positive_integers() -> None:
    from kg_platform.cli.main import app

    for bad in ("1024,abc", "0", ""):
        result = CliRunner().invoke(app, ["lab", "bench", "embed", "--values", bad])
        assert result.exit_code != 0 and "--values" in result.output, result.output
