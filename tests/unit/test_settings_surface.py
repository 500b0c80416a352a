"""The settings surface: at most 80 fields, each described and bounded; docs/settings.md generated
from them; fitted constants in kg_platform.tuning with their shipped files; former names read for
one release with a warning naming the replacement, each recorded in CHANGELOG.md."""

from __future__ import annotations

import json
import re
import types
import typing
from pathlib import Path

import annotated_types as at
import pytest
from pydantic import BaseModel, SecretStr

from kg_platform import config_moves, settings_docs, tuning
from kg_platform.config import Settings
from kg_platform.config_moves import MOVES, SettingMovedWarning
from kg_platform.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]

#: strings that are not a choice among fixed values, and why
FREE_STRINGS = {
    "corpus": "a corpus name",
    "neo4j.uri": "a URI",
    "neo4j.username": "a user name",
    "neo4j.database": "a database name",
    "neo4j.version": "a release number (pattern)",
    "neo4j.heap": "a size (pattern)",
    "neo4j.pagecache": "a size (pattern)",
    "embedding.model": "a model name or path",
    "embedding.device": "a torch device",
    "embedding.base_url": "a URL",
    "segment.sage_model": "a directory",
    "ingest.ray_address": "a cluster address",
    "retrieve.strategy": "an open registry (the lab and plugins add strategies)",
    "mog.default_router": "'builtin', 'none' or a directory",
    "sage.cross_encoder": "a path",
    "rerank.weights_file": "a path",
    "llm.base_url": "a URL",
    "llm.model": "a model name",
    "local_llm.model_path": "a path",
    "distill.nlp_model": "a spaCy package or folder",
    "distill.steps": "step names, checked by `kgp distill`",
    "reasoning.strategy": "an open registry",
    "serve.host": "an address",
    "serve.cors_origins": "origins",
}


def _fields():
    for section, _model, fields in settings_docs.sections():
        for name, field in fields.items():
            yield (f"{section}.{name}" if section else name), field


def _kinds(annotation) -> set:
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return set().union(*(_kinds(a) for a in args))
    if typing.get_origin(annotation) is list:
        return _kinds(args[0])
    return {annotation}


def test_at_most_80_settings_each_described() -> None:
    fields = dict(_fields())
    assert len(fields) <= 80, f"{len(fields)} settings: move fitted or lab-only ones out"
    undescribed = [k for k, f in fields.items() if len((f.description or "").strip()) < 8]
    assert not undescribed


def test_every_number_has_a_lower_and_an_upper_bound() -> None:
    missing = []
    for key, field in _fields():
        kinds = _kinds(field.annotation)
        if not kinds & {int, float} or bool in kinds:
            continue
        low = any(isinstance(m, at.Ge | at.Gt) for m in field.metadata)
        high = any(isinstance(m, at.Le | at.Lt) for m in field.metadata)
        if not (low and high):
            missing.append(key)
    assert not missing, f"numbers without bounds: {missing}"


def test_every_string_is_a_choice_or_known_free_text() -> None:
    free = []
    for key, field in _fields():
        kinds = _kinds(field.annotation)
        literal = any(typing.get_origin(k) is typing.Literal for k in kinds)
        if str in kinds and not literal and key not in FREE_STRINGS:
            free.append(key)
        if kinds & {str, SecretStr, Path} and literal:
            pytest.fail(f"{key} mixes a choice with free text")
    assert not free, f"strings that should be a Literal (or be listed as free text): {free}"
    assert set(FREE_STRINGS) <= dict(_fields()).keys()


def test_a_value_out_of_bounds_is_refused_with_its_name() -> None:
    with pytest.raises(ValueError, match="bolt_port"):
        Settings(neo4j={"bolt_port": 70000})
    with pytest.raises(ValueError, match="temperature"):
        Settings(llm={"temperature": 3})


def test_the_settings_manual_is_generated_from_the_fields() -> None:
    committed = settings_docs.DOC.read_text(encoding="utf-8")
    assert committed == settings_docs.render(), (
        "docs/settings.md is stale: run `python -m kg_platform.settings_docs`"
    )
    for key, _field in _fields():
        assert f"`{key}`" in committed
    assert settings_docs.main(["--check"]) == 0


def test_the_check_fails_on_a_stale_manual(tmp_path) -> None:
    stale = tmp_path / "settings.md"
    stale.write_text(settings_docs.render().replace("retrieve.k", "retrieve.kk"))
    assert settings_docs.main(["--check", "--out", str(stale)]) == 1


def test_the_fitted_values_are_the_former_defaults_and_checked_against_their_sha256(
    tmp_path, monkeypatch
) -> None:
    t = Settings().tuning
    propagation = (t.propagation.lam_c, t.propagation.lam_d, t.propagation.lam_i)
    assert propagation + (t.propagation.lam_t, t.propagation.lam_p, t.propagation.lam_e) == (
        0.5,
        0.35,
        0.075,
        0.175,
        0.0,
        0.0,
    )
    walk = t.entity_graph
    assert (walk.chunk_weight, walk.damping, walk.max_degree) == (0.3, 1.0, 30)
    assert (t.mog.k_r, t.mog.scoring, t.mog.zero_weight, t.mog.level_skip) == (
        3,
        "hybrid",
        0.05,
        0.5,
    )
    meta = json.loads((tuning.MODELS_DIR / "sage" / "meta.json").read_text())
    assert (meta["threshold"], meta["coarse_tokens"], meta["coarse_mode"]) == (
        0.44,
        400,
        "adaptive",
    )
    # a changed file is refused
    copy = tmp_path / "layer-weights.json"
    copy.write_text(tuning.PROPAGATION_WEIGHTS.read_text().replace("0.5", "0.6"))
    provenance = tuning.PROPAGATION_WEIGHTS.with_name("layer-weights.provenance.json")
    (tmp_path / "layer-weights.provenance.json").write_text(provenance.read_text())
    with pytest.raises(ConfigError, match="do not match their provenance"):
        tuning.fitted_values(copy)


def test_the_shipped_sage_model_is_cut_with_its_own_calibration() -> None:
    from kg_platform.segmenting.sage import segmenter_params

    meta = {"threshold": 0.44, "coarse_tokens": 400, "coarse_mode": "adaptive"}
    assert segmenter_params(Settings(), meta) == (0.44, 400, "adaptive")
    lab = Settings().with_tuning(segment={"sage_threshold": 0.6, "sage_coarse_mode": "greedy"})
    assert segmenter_params(lab, meta) == (0.6, 400, "greedy")


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KGP_CONFIG", raising=False)
    for old in MOVES:
        monkeypatch.delenv(config_moves.setting_env_name(old), raising=False)
    monkeypatch.delenv("KGP_RETRIEVE__FETCH", raising=False)
    return monkeypatch


def test_a_former_env_name_still_works_with_a_warning_naming_its_replacement(clean_env) -> None:
    clean_env.setenv("KGP_MOG__K_R", "8")
    clean_env.setenv("KGP_PROPAGATION__LAM_C", "0.6")
    with pytest.warns(SettingMovedWarning) as caught:
        s = Settings()
    assert s.tuning.mog.k_r == 8 and s.tuning.propagation.lam_c == 0.6
    assert s.tuning.propagation.lam_d == 0.35  # the rest stay the shipped values
    messages = " ".join(str(w.message) for w in caught)
    assert "mog.k_r" in messages and "KGP_LAB__TUNING__MOG__K_R" in messages
    assert "kg_platform/models/propagation/layer-weights.json" in messages


def test_a_former_toml_key_still_works_and_a_rename_sets_the_new_name(clean_env, tmp_path) -> None:
    (tmp_path / "kgp.toml").write_text(
        '[mog]\nscoring = "bm25"\nfetch = 300\n[decomposition]\nmax_rounds = 2\n'
    )
    with pytest.warns(SettingMovedWarning) as caught:
        s = Settings()
    assert s.retrieve.fetch == 300
    assert s.tuning.mog.scoring == "bm25" and s.tuning.decomposition.max_rounds == 2
    messages = " ".join(str(w.message) for w in caught)
    assert "the setting retrieve.fetch" in messages and "mog-bm25" in messages
    # the new name wins over the former one
    clean_env.setenv("KGP_RETRIEVE__FETCH", "400")
    with pytest.warns(SettingMovedWarning):
        assert Settings().retrieve.fetch == 400


def test_a_former_name_with_a_bad_value_is_refused(clean_env) -> None:
    clean_env.setenv("KGP_MOG__K_R", "0")
    with pytest.warns(SettingMovedWarning), pytest.raises(ValueError, match="k_r"):
        Settings()


def test_no_warning_without_former_names(clean_env, recwarn) -> None:
    Settings()
    assert not [w for w in recwarn if issubclass(w.category, SettingMovedWarning)]


def test_the_lab_overrides_tuning_for_the_process_and_per_settings(clean_env) -> None:
    s = Settings()
    assert s.tuning.mog.level_skip == 0.5
    try:
        tuning.set_overrides({"mog": {"level_skip": 0.0}})
        assert s.tuning.mog.level_skip == 0.0
        per_run = s.with_tuning(mog={"level_skip": 0.25})
        assert per_run.tuning.mog.level_skip == 0.25 and s.tuning.mog.level_skip == 0.0
    finally:
        tuning.set_overrides({})
    assert s.tuning.mog.level_skip == 0.5
    with pytest.raises(ConfigError, match="mog.no_such"):
        s.with_tuning(mog={"no_such": 1})


def test_every_move_is_in_the_changelog_and_names_a_real_destination() -> None:
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "## [Unreleased]" in changelog
    settings_keys = dict(_fields()).keys()
    for old, (dest, _lives) in MOVES.items():
        assert f"`{old}`" in changelog, f"{old} is not in CHANGELOG.md"
        assert old not in settings_keys, f"{old} moved but is still a setting"
        kind, section, name = dest.split(".")
        if kind == "setting":
            assert f"{section}.{name}" in settings_keys
        else:
            model = tuning.Tuning.model_fields[section].annotation
            assert isinstance(model, type) and issubclass(model, BaseModel)
            assert name in model.model_fields, dest
    # the move list covers every field the tuning holds
    held = {
        f"{section}.{name}"
        for section, f in tuning.Tuning.model_fields.items()
        for name in typing.cast(type[BaseModel], f.annotation).model_fields
    }
    destinations = {d.split(".", 1)[1] for d, _ in MOVES.values() if d.startswith("tuning.")}
    # constants born in the tuning (never released as settings, so nothing to move)
    born_here = {
        "entity_graph.references_top",
        "entity_graph.references_per",
        "rerank.state_cache_mb",
        "rerank.chain_pair",
    }
    assert held - born_here == destinations
    assert re.search(r"^### (Changed|Removed|Deprecated)", changelog, re.M)
