"""Operators' access to the tuning: the few values that are limits of a deployment are set as
``[tuning.<section>]`` in kgp.toml or ``KGP_TUNING__<SECTION>__<NAME>``, validated against their
bounds, listed in docs/settings.md ("Advanced tuning"); their former setting names warn with the
supported name, which wins."""

from __future__ import annotations

import typing
import warnings

import annotated_types as at
import pytest

from kg_platform import config_moves, config_tuning, settings_docs
from kg_platform.config import Settings
from kg_platform.config_moves import MOVES, SettingMovedWarning
from kg_platform.errors import ConfigError


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # no kgp.toml unless a test writes one
    monkeypatch.delenv("KGP_CONFIG", raising=False)
    for old in MOVES:
        monkeypatch.delenv(config_moves.setting_env_name(old), raising=False)
    for section, name, _field in config_tuning.operator_fields():
        monkeypatch.delenv(config_tuning.env_name(section, name), raising=False)
    return monkeypatch


def test_an_environment_override_takes_effect_without_a_warning(clean_env) -> None:
    clean_env.setenv("KGP_TUNING__NEO4J__RETRY_S", "3")
    clean_env.setenv("KGP_TUNING__SERVE__THREADS", "16")
    clean_env.setenv("KGP_TUNING__REASONING__STORE_TRAJECTORIES", "false")
    clean_env.setenv("KGP_TUNING__LOCAL_LLM__CHAT_FORMAT", "chatml")
    with warnings.catch_warnings():
        warnings.simplefilter("error", SettingMovedWarning)
        s = Settings()
    t = s.tuning
    assert (t.neo4j.retry_s, t.serve.threads) == (3.0, 16)
    assert t.reasoning.store_trajectories is False and t.local_llm.chat_format == "chatml"
    assert t.neo4j.connect_timeout_s == 5.0  # the rest keep the shipped values
    # a copy for the lab keeps the operator's values under its own
    lab = s.with_tuning(mog={"level_skip": 0.0})
    assert lab.tuning.serve.threads == 16 and lab.tuning.mog.level_skip == 0.0


def test_a_file_override_takes_effect_and_the_environment_and_arguments_win(
    clean_env, tmp_path
) -> None:
    (tmp_path / "kgp.toml").write_text(
        "[tuning.serve]\nthreads = 3\ningest_workers = 2\n[tuning.jobs]\nlease_s = 20\n"
    )
    t = Settings().tuning
    assert (t.serve.threads, t.serve.ingest_workers, t.jobs.lease_s) == (3, 2, 20.0)
    clean_env.setenv("KGP_TUNING__SERVE__THREADS", "5")
    t = Settings().tuning
    assert (t.serve.threads, t.serve.ingest_workers) == (5, 2)
    assert Settings(tuning={"serve": {"threads": 7}}).tuning.serve.threads == 7


def test_a_value_out_of_bounds_is_refused_naming_the_field_and_its_bounds(clean_env) -> None:
    clean_env.setenv("KGP_TUNING__SERVE__THREADS", "0")
    with pytest.raises(ConfigError, match=r"tuning\.serve\.threads = 0 .*>= 1, <= 1_024") as exc:
        Settings()
    assert "KGP_TUNING__SERVE__THREADS" in exc.value.hint
    clean_env.delenv("KGP_TUNING__SERVE__THREADS")
    with pytest.raises(ConfigError, match=r"tuning\.neo4j\.retry_s = 99999.*>= 0, <= 3_600"):
        Settings(tuning={"neo4j": {"retry_s": 99999}})


def test_a_fitted_value_and_an_unknown_name_are_refused(clean_env, tmp_path) -> None:
    (tmp_path / "kgp.toml").write_text("[tuning.mog]\nk_r = 8\n")
    with pytest.raises(ConfigError, match=r"tuning\.mog\.k_r is a fitted") as exc:
        Settings()
    assert "[lab.tuning.mog]" in exc.value.hint and "serve.threads" in exc.value.hint
    (tmp_path / "kgp.toml").unlink()
    clean_env.setenv("KGP_TUNING__SERVE__THREAD", "4")
    with pytest.raises(ConfigError, match=r"tuning\.serve\.thread is not a tuning value"):
        Settings()


def test_a_former_name_warns_with_the_supported_name_which_wins(clean_env) -> None:
    clean_env.setenv("KGP_NEO4J__RETRY_S", "3")
    with pytest.warns(SettingMovedWarning) as caught:
        assert Settings().tuning.neo4j.retry_s == 3.0
    message = " ".join(str(w.message) for w in caught)
    assert "KGP_TUNING__NEO4J__RETRY_S" in message and "[tuning.neo4j] retry_s" in message
    assert "LAB__TUNING" not in message
    clean_env.setenv("KGP_TUNING__NEO4J__RETRY_S", "4")
    with pytest.warns(SettingMovedWarning):
        assert Settings().tuning.neo4j.retry_s == 4.0
    # every operator value that was a setting names its supported name
    for section, name, _field in config_tuning.operator_fields():
        if f"{section}.{name}" in MOVES:
            assert config_tuning.env_name(section, name) in config_moves.replacement(
                f"{section}.{name}"
            )


def test_every_operator_value_is_described_and_bounded() -> None:
    fields = config_tuning.operator_fields()
    assert len(fields) >= 13
    for section, name, field in fields:
        assert len((field.description or "").strip()) >= 8, f"{section}.{name}"
        args = typing.get_args(field.annotation) or (field.annotation,)
        if {int, float} & set(args) and bool not in args:
            assert any(isinstance(m, at.Ge | at.Gt) for m in field.metadata), name
            assert any(isinstance(m, at.Le | at.Lt) for m in field.metadata), name


def test_the_manual_lists_every_operator_value_and_regenerates(tmp_path) -> None:
    text = settings_docs.render()
    part = text.split("## Advanced tuning", 1)[1]
    for section, name, _field in config_tuning.operator_fields():
        assert f"`tuning.{section}.{name}` (`{config_tuning.env_name(section, name)}`)" in part
    assert "`tuning.mog.k_r`" not in part  # fitted values are the lab's
    out = tmp_path / "settings.md"
    assert settings_docs.main(["--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == text
    assert settings_docs.main(["--check", "--out", str(out)]) == 0
    assert settings_docs.main(["--check"]) == 0  # the committed docs/settings.md is current
