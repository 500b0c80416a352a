"""``kgp bench ingest`` reports rates, peak RSS and ratios against embed-only baselines."""

from __future__ import annotations


import pytest

from kg_platform.lab.bench.ingest import run_ingest_bench

pytestmark = pytest.mark.integration


def test_bench_ingest_reports_rates_and_ratios(settings, graph_session) -> None:
    if not (settings.bench_dir / "dev" / "hotpotqa.jsonl").exists():
        pytest.skip("needs the shared bench data")
    out = run_ingest_bench(settings, limit=2)
    assert out["status"] == "completed"
    assert out["sources"] > 0 and out["pieces"] > 0
    assert out["documents_per_s"] > 0 and out["pieces_per_s"] > 0 and out["peak_rss_mb"] > 0
    # Every distinct text the pipeline needs is embedded at most once.
    assert 0 < out["texts_embedded"] <= out["embed_only_same_texts"]
    assert out["ratio_vs_plain_text"] > 0 and out["ratio_vs_same_texts"] > 0
    assert out["embedder"].startswith("onnx:")
    with graph_session.driver.session(database=graph_session.database) as session:
        left = session.run("MATCH (c:Corpus {name: $corpus}) RETURN count(c) AS n",
                           corpus=out["corpus"]).single()["n"]
    assert left == 0  # the throw-away corpus is dropped
