"""Where a product setting comes from: the KGP_ variables, the conventional Neo4j variables, the
one other name ``ingest.write_batch_size`` is read from, and a ``kgp.toml`` whose ``[lab]`` table
belongs to the lab, not the product."""

from __future__ import annotations

import pytest

from kg_platform.config import Settings


@pytest.fixture(autouse=True)
def _no_settings_env(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.chdir(tmp_path)  # no kgp.toml unless a test writes one
    for name in ("KGP_WRITE_BATCH_SIZE", "KGP_INGEST__WRITE_BATCH_SIZE", "NEO4J_URI", "KGP_CONFIG"):
        monkeypatch.delenv(name, raising=False)


def test_write_batch_size_lives_in_ingest_and_keeps_its_former_variable(monkeypatch) -> None:
    assert Settings().ingest.write_batch_size == 500
    monkeypatch.setenv("KGP_WRITE_BATCH_SIZE", "7")
    assert Settings().ingest.write_batch_size == 7
    monkeypatch.setenv("KGP_INGEST__WRITE_BATCH_SIZE", "9")  # the section's own name wins
    assert Settings().ingest.write_batch_size == 9


def test_conventional_neo4j_variables_win_over_the_kgp_ones(monkeypatch) -> None:
    monkeypatch.setenv("KGP_NEO4J__URI", "bolt://kgp:1")
    monkeypatch.setenv("NEO4J_URI", "bolt://conventional:2")
    monkeypatch.setenv("KGP_NEO4J__DATABASE", "other")
    s = Settings()
    assert (s.neo4j.uri, s.neo4j.database) == ("bolt://conventional:2", "other")


def test_settings_only_the_lab_reads_are_not_product_settings(tmp_path) -> None:
    """Router training, decomposer data collection and the bench folder are the lab's
    (``kg_platform_lab.settings``); a ``[lab]`` table in kgp.toml is ignored here."""
    (tmp_path / "kgp.toml").write_text(
        '[ingest]\ntransaction_rows = 11\n[lab]\nbench_dir = "/b"\n[lab.router]\nmax_epochs = 3\n'
    )
    s = Settings()  # reads ./kgp.toml
    assert s.ingest.transaction_rows == 11
    dumped = s.model_dump()
    assert "lab" not in dumped and "bench_dir" not in dumped and "write_batch_size" not in dumped
    assert not [f for f in dumped["mog"] if f.startswith("router_")]
    assert "decomposition" not in dumped  # PIKE-RAG's values: kg_platform.tuning
