"""``kgp bench ingest-growth`` on a real Neo4j at toy sizes: one row per size with the added
source's time next to the embed-only time of its texts, and nothing left behind."""

from __future__ import annotations

import pytest

from kg_platform.lab.bench.ingest_growth import run_growth_bench

pytestmark = pytest.mark.integration


def test_growth_bench_reports_every_size_and_cleans_up(graph_session, settings):
    result = run_growth_bench(settings, sizes=[40, 120], add=1, seed_questions=2)
    rows = result["sizes"]
    assert len(rows) == 2
    assert 40 <= rows[0]["pieces"] < rows[1]["pieces"] and rows[1]["pieces"] >= 120
    for row in rows:
        assert row["per_source_s"] > 0 and row["embed_only_s"] > 0
        assert row["sync_modes"] == ["incremental"]  # the replicas are a frozen, synced state
        assert row["full_build_s"] is not None
        assert abs(row["ratio_vs_embed"] - row["per_source_s"] / row["embed_only_s"]) < 0.2
    assert rows[0]["ratio_vs_smallest"] == 1.0
    left = graph_session.read_raw(
        "MATCH (n) WHERE n.corpus STARTS WITH 'bench-growth' OR n.name STARTS WITH "
        "'bench-growth' RETURN count(n) AS n"
    )[0]["n"]
    assert left == 0
