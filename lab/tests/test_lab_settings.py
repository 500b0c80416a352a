"""The lab's settings: defaults, KGP_LAB__ variables, the [lab] table of kgp.toml, and the
commands' code reading them from there rather than from the product's settings."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kg_platform_lab.settings import LabSettings, get_lab_settings


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.chdir(tmp_path)  # no kgp.toml unless a test writes one
    monkeypatch.delenv("KGP_CONFIG", raising=False)
    for name in ("KGP_LAB__BENCH_DIR", "KGP_LAB__ROUTER__MAX_EPOCHS", "KGP_LAB__ROUTER__PATIENCE"):
        monkeypatch.delenv(name, raising=False)
    # The cached settings must not outlive this module's emptied environment: a later test in
    # the same process (any order, e.g. under pytest-xdist) would read bench_dir = "bench".
    get_lab_settings.cache_clear()
    yield
    monkeypatch.undo()
    get_lab_settings.cache_clear()


def test_defaults_of_router_training_and_decomposer_collection() -> None:
    s = LabSettings(bench_dir=Path("bench"))
    r, d = s.router, s.decomposer
    assert (r.hidden, r.dropout, r.lr, r.max_epochs, r.patience, r.val_fraction) == (
        256,
        0.1,
        1e-3,
        500,
        30,
        0.2,
    )
    assert (r.label_scorer, r.seed) == ("embedding", 13)
    assert (d.ucb_alpha, d.top_k_explore, d.delta_explore, d.attempts, d.correct_f1) == (
        1.0,
        8,
        0.35,
        3,
        0.8,
    )


def test_environment_beats_the_lab_table_of_kgp_toml(monkeypatch, tmp_path) -> None:
    (tmp_path / "kgp.toml").write_text(
        '[ingest]\ntransaction_rows = 11\n[lab]\nbench_dir = "/data/bench"\n'
        "[lab.router]\nmax_epochs = 12\npatience = 4\n"
    )
    monkeypatch.setenv("KGP_LAB__ROUTER__MAX_EPOCHS", "99")
    s = LabSettings()
    assert s.bench_dir == Path("/data/bench")
    assert (s.router.max_epochs, s.router.patience) == (99, 4)


def test_config_file_named_by_kgp_config(monkeypatch, tmp_path) -> None:
    other = tmp_path / "elsewhere.toml"
    other.write_text("[lab.decomposer]\nattempts = 5\n")
    monkeypatch.setenv("KGP_CONFIG", str(other))
    assert LabSettings().decomposer.attempts == 5


def test_bench_defaults_follow_the_lab_settings(monkeypatch, tmp_path) -> None:
    from kg_platform_lab.bench.ingest import default_qa_file

    assert default_qa_file(LabSettings(bench_dir=tmp_path)) == tmp_path / "dev" / "hotpotqa.jsonl"
    monkeypatch.setenv("KGP_LAB__BENCH_DIR", str(tmp_path / "b"))
    get_lab_settings.cache_clear()
    try:
        assert default_qa_file() == tmp_path / "b" / "dev" / "hotpotqa.jsonl"
    finally:
        get_lab_settings.cache_clear()


def test_invalid_values_name_the_field() -> None:
    with pytest.raises(ValueError, match="val_fraction"):
        LabSettings(router={"val_fraction": 1.5})


def test_the_tuning_table_overrides_the_products_fitted_constants(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``[lab.tuning.<section>]`` and ``KGP_LAB__TUNING__...`` reach every product Settings object
    once applied (every ``kgp lab`` command does); a wrong name is refused."""
    from typer.testing import CliRunner

    from kg_platform import tuning
    from kg_platform.cli.main import app
    from kg_platform.config import Settings
    from kg_platform_lab.settings import apply_lab_tuning

    (tmp_path / "kgp.toml").write_text('[lab.tuning.mog]\nscoring = "bm25"\n')
    monkeypatch.setenv("KGP_LAB__TUNING__PROPAGATION__LAM_C", "0.6")
    product = Settings()
    assert product.tuning.mog.scoring == "hybrid"
    try:
        apply_lab_tuning(LabSettings())
        assert product.tuning.mog.scoring == "bm25" and product.tuning.propagation.lam_c == 0.6
        tuning.set_overrides({})
        # a lab command applies the table before it runs
        result = CliRunner().invoke(app, ["lab", "eval", "--help"])
        assert result.exit_code == 0, result.output
        assert Settings().tuning.mog.scoring == "bm25"
        with pytest.raises(Exception, match="mog.no_such"):
            apply_lab_tuning(LabSettings(tuning={"mog": {"no_such": 1}}))
    finally:
        tuning.set_overrides({})
    assert product.tuning.mog.scoring == "hybrid"
