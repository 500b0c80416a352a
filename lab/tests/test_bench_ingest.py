"""``kgp lab bench ingest`` reports rates, peak RSS, both ratios and graph sizes; ``--peer`` runs
langchain-neo4j's ``Neo4jVector.from_texts`` on the same paragraphs and cleans up after it."""

from __future__ import annotations

import pytest

from kg_platform_lab.bench.ingest import default_qa_file, format_ingest_bench, run_ingest_bench
from kg_platform_lab.bench.ingest_peer import PEER_INDEX, PEER_LABEL
from kg_platform_lab.qa_ingest import read_questions

pytestmark = pytest.mark.integration


def _needs_bench_data(settings) -> None:
    if not default_qa_file().exists():
        pytest.skip("needs the shared bench data (KGP_LAB__BENCH_DIR)")


def test_bench_ingest_reports_rates_and_ratios(settings, graph_session) -> None:
    _needs_bench_data(settings)
    out = run_ingest_bench(settings, limit=2)
    assert out["status"] == "completed"
    assert out["sources"] > 0 and out["pieces"] > 0
    assert out["documents_per_s"] > 0 and out["pieces_per_s"] > 0 and out["peak_rss_mb"] > 0
    # Every distinct text the pipeline needs is embedded at most once.
    assert 0 < out["texts_embedded"] <= out["embed_only_same_texts"]
    assert out["ratio_vs_plain_text"] > 0 and out["ratio_vs_same_texts"] > 0
    assert out["target"].startswith("ratio_vs_plain_text")
    assert out["embedder"].startswith("onnx:")
    assert "peer" not in out
    cpu = out["cpu_s"]
    assert cpu["pipeline_process"] > 0 and cpu["embed_only_plain_text"] > 0
    if settings.neo4j.uri and "127.0.0.1" in settings.neo4j.uri:  # the test server runs here
        assert cpu["neo4j"] is not None and cpu["neo4j"] > 0
        assert out["ratio_ceiling_cpu"] == pytest.approx(
            cpu["embed_only_plain_text"] / (cpu["pipeline_process"] + cpu["neo4j"]), abs=0.03
        )
    graph = out["graph"]
    assert graph["nodes_by_label"]["Source"] == out["sources"]
    assert graph["nodes_by_label"]["Piece"] == out["pieces"]
    assert graph["relationships_by_type"]["IN"] == out["pieces"]
    report = "\n".join(format_ingest_bench(out))
    assert "TARGET >= 0.8" in report and str(out["ratio_vs_plain_text"]) in report
    assert "ratio ceiling with every core busy" in report
    with graph_session.driver.session(database=graph_session.database) as session:
        left = session.run(
            "MATCH (c:Corpus) WHERE c.name STARTS WITH $corpus RETURN count(c) AS n",
            corpus=out["corpus"],
        ).single()["n"]
    assert left == 0  # the throw-away corpus and the warm-up corpus are dropped
    assert out["warm_up_s"] > 0


def test_bench_ingest_peer_ingests_the_same_paragraphs_and_cleans_up(
    settings, graph_session
) -> None:
    pytest.importorskip("langchain_neo4j", reason="extra: peers")
    _needs_bench_data(settings)
    out = run_ingest_bench(settings, limit=2, peer=True)
    paragraphs = {
        p["doc_id"] for q in read_questions(default_qa_file(), 2) for p in q["paragraphs"]
    }
    peer = out["peer"]
    assert out["sources"] == len(paragraphs)
    assert peer["documents"] == len(paragraphs)
    # one node per paragraph (ids are the text's md5, so equal texts would share one), a vector
    # each, no relationships; our graph stores more: sections, chunks, pieces and their links
    assert 0 < peer["nodes"] <= len(paragraphs) and peer["vectors"] == peer["nodes"]
    assert peer["relationships"] == 0
    assert {"text", "embedding", "title"} <= set(
        peer["stores"]
        .replace("'", "")
        .replace("[", " ")
        .replace("]", " ")
        .replace(",", " ")
        .split()
    )
    assert out["graph"]["nodes"] > peer["nodes"] and out["graph"]["relationships"] > 0
    assert peer["documents_per_s"] > 0 and peer["our_documents_per_s_over_peer"] > 0
    assert "peer (langchain-neo4j" in "\n".join(format_ingest_bench(out))
    left = graph_session.read_raw(f"MATCH (n:{PEER_LABEL}) RETURN count(n) AS n")[0]["n"]
    assert left == 0
    assert (
        graph_session.read_raw(
            "SHOW INDEXES YIELD name WHERE name = $name RETURN name", name=PEER_INDEX
        )
        == []
    )
    assert (
        graph_session.read_raw(
            "SHOW CONSTRAINTS YIELD labelsOrTypes WHERE labelsOrTypes = [$l] RETURN 1 AS x",
            l=PEER_LABEL,
        )
        == []
    )


def test_writer_only_times_the_writer_apart_and_cleans_up(settings, graph_session) -> None:
    from kg_platform_lab.bench.ingest_writer import format_writer_bench, run_writer_bench

    _needs_bench_data(settings)
    out = run_writer_bench(settings, limit=3)
    paragraphs = {
        p["doc_id"] for q in read_questions(default_qa_file(), 3) for p in q["paragraphs"]
    }
    assert out["sources"] == len(paragraphs) and out["pieces"] >= out["sources"]
    # the sync ran over what the writer stored: edges exist only if the pieces were written
    assert out["similar_edges"] > 0 and out["texts_embedded"] > 0
    assert out["write_s"] > 0 and out["embed_s"] > 0 and out["warm_up_write_s"] > 0
    ratio = out["writer_sources_per_s"] / out["worker_sources_per_s"]
    assert out["workers_per_primary"] == pytest.approx(ratio, rel=0.05)
    assert "embedding workers one primary keeps up with" in "\n".join(format_writer_bench(out))
    with graph_session.driver.session(database=graph_session.database) as session:
        left = session.run(
            "MATCH (n) WHERE n.corpus STARTS WITH $corpus RETURN count(n) AS n",
            corpus=out["corpus"],
        ).single()["n"]
    assert left == 0  # the measured corpus and the warm-up copy are both dropped


def test_transaction_groups_keep_sources_whole_up_to_the_row_cap() -> None:
    from types import SimpleNamespace

    from kg_platform_lab.bench.ingest_writer import transaction_groups

    plans = [SimpleNamespace(node_count=n) for n in (5, 5, 12, 1, 1)]
    groups = transaction_groups(plans, max_rows=10)  # type: ignore[arg-type]
    assert [[p.node_count for p in g] for g in groups] == [[5, 5], [12], [1, 1]]


def test_entities_times_the_nlp_layer_against_runs_without_it_and_cleans_up(
    settings, graph_session
) -> None:
    from kg_platform.distilling.nlp import nlp_available

    if not nlp_available(settings.distill.nlp_model):
        pytest.skip("needs spaCy and its pipeline (extra: nlp)")
    _needs_bench_data(settings)
    out = run_ingest_bench(settings, limit=2, entities=True)
    ent = out["entities"]
    assert ent["status"] == "completed"
    # the layer ran in the with-run only, and the ratio is against the mean of both runs without
    assert ent["phase_s"]["entities"] > 0 and out["phase_s"].get("entities", 0) == 0
    assert ent["counts"]["entity_chunks"] > 0 and ent["counts"]["entity_mentions"] > 0
    before, after = ent["without_s"]
    assert before == out["pipeline_s"] and after > 0
    # the report rounds times to 0.01 s and the ratio (from unrounded times) to 0.001
    mean_without = (before + after) / 2
    lowest = (ent["with_s"] - 0.005) / (mean_without + 0.005) - 0.0005
    highest = (ent["with_s"] + 0.005) / (mean_without - 0.005) + 0.0005
    assert lowest <= ent["entities_ratio"] <= highest
    assert "TARGET <= 1.3" in "\n".join(format_ingest_bench(out))
    left = graph_session.read_raw(
        "MATCH (n) WHERE n.corpus STARTS WITH $corpus RETURN count(n) AS n", corpus=out["corpus"]
    )[0]["n"]
    assert left == 0  # the with-layer and second runs' corpora, entities included, are dropped
