"""``kgp lab bench retrieve`` at toy size on a second, real Neo4j (the suite's spare server,
passed in, instead of two starts of a kept one of the bench's own: the copies are found in the
graph either way): one row per size with every strategy next to the plain vector query, and a
server whose copies the next run reuses."""

from __future__ import annotations

import pytest

from kg_platform_lab.bench.retrieval import run_bench

pytestmark = [pytest.mark.integration, pytest.mark.slow]

CORPUS = "t-bench-retrieve"


def test_a_kept_bench_server_is_measured_twice_and_built_once(
    cli_env, settings, embedder, spare_neo4j
):
    from kg_platform_lab.qa_ingest import ingest_qa
    from kg_platform.ingest.writer import drop_corpus
    from kg_platform_lab.bench.ingest import default_qa_file

    if not default_qa_file().exists():
        pytest.skip("needs the shared bench data (KGP_LAB__BENCH_DIR)")
    drop_corpus(cli_env, CORPUS)
    ingest_qa(cli_env, settings, default_qa_file(), CORPUS, limit=2, embedder=embedder)
    try:
        lines: list[str] = []
        first = run_bench(
            CORPUS,
            [40],
            3,
            ["vector", "mog"],
            echo=lines.append,
            server=spare_neo4j,
            rounds=2,
        )
        per_copy = first["pieces_per_copy"]
        (row,) = first["sizes"]
        assert row["pieces"] == -(-40 // per_copy) * per_copy  # whole copies, at least 40
        for name in ("vector_query", "vector", "mog"):
            assert row[name]["p50_ms"] > 0 and row[name]["p95_ms"] >= row[name]["p50_ms"]
        assert row["vector_query"]["x_vector_p50"] == pytest.approx(1.0, abs=0.05)
        # one ratio per timed round (the first of two rounds is the warm-up)
        assert row["vector_query"]["x_vector_p50_rounds"] == [1.0]
        assert (
            len(row["mog"]["x_vector_p50_rounds"]) == 1 and row["mog"]["x_vector_p50_rounds"][0] > 0
        )
        assert first["rounds"] == 2 and first["queries"] == "piece texts"
        assert not any(line.startswith("reusing") for line in lines)

        lines.clear()
        again = run_bench(
            CORPUS,
            [40],
            2,
            ["vector"],
            echo=lines.append,
            server=spare_neo4j,
            questions=default_qa_file(),
        )
        assert any(line.startswith("reusing") for line in lines)  # nothing copied again
        assert again["sizes"][0]["pieces"] == row["pieces"]
        assert again["queries"] == str(default_qa_file())
        assert spare_neo4j.status().running  # the caller's server: left running
    finally:
        drop_corpus(cli_env, CORPUS)
