"""Job specs: validated TOML/YAML, paths relative to the spec, crontab semantics kept."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from kg_platform.errors import JobError
from kg_platform.jobs.spec import cron_trigger, find_spec, load_spec, load_specs

REPO = Path(__file__).resolve().parents[2]


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_shipped_specs_validate() -> None:
    specs = {s.name: s for s in load_specs(REPO / "ingestion")}
    assert "samples" in specs
    assert specs["samples"].resolved_paths() == [REPO / "ingestion" / "samples"]
    assert specs["samples"].trigger() is not None


def test_toml_and_yaml_read_the_same(tmp_path: Path) -> None:
    _write(
        tmp_path / "a.toml",
        'name = "a"\ncorpus = "c"\nschedule = "0 3 * * *"\n'
        '[sources]\npaths = ["docs"]\ninclude = ["*.md"]\n[options]\nlevels = 3\n',
    )
    _write(
        tmp_path / "b.yaml",
        "name: b\ncorpus: c\nschedule: '0 3 * * *'\n"
        "sources: {paths: [docs], include: ['*.md']}\noptions: {levels: 3}\n",
    )
    a, b = load_specs(tmp_path)
    assert a.model_dump(exclude={"name"}) == b.model_dump(exclude={"name"})
    assert a.resolved_paths() == [tmp_path / "docs"]


def test_unknown_key_is_an_error_naming_the_file(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "bad.toml",
        'name = "x"\ncorpus = "c"\n[sources]\npaths = ["d"]\n[options]\nchunk_size = 5\n',
    )
    with pytest.raises(JobError) as err:
        load_spec(path)
    assert "bad.toml" in str(err.value) and "options.chunk_size" in str(err.value)


def test_invalid_cron_is_rejected(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "c.toml",
        'name = "x"\ncorpus = "c"\nschedule = "61 * * * *"\n[sources]\npaths = ["d"]\n',
    )
    with pytest.raises(JobError, match="schedule"):
        load_spec(path)


def test_crontab_sunday_is_sunday() -> None:
    # APScheduler 3 numbers weekdays from Monday; crontab from Sunday (0 and 7).
    start = datetime(2026, 11, 16, tzinfo=timezone.utc)  # a Monday
    for expr in ("0 3 * * 0", "0 3 * * 7", "0 3 * * sun"):
        nxt = cron_trigger(expr, "UTC").get_next_fire_time(None, start)
        assert nxt.weekday() == 6 and nxt.hour == 3, expr
    nxt = cron_trigger("30 2 * * 1-5", "UTC").get_next_fire_time(None, start)
    assert (nxt.weekday(), nxt.hour, nxt.minute) == (0, 2, 30)


def test_six_fields_mean_seconds_first() -> None:
    trig = cron_trigger("*/5 * * * * *", "UTC")
    start = datetime(2026, 1, 1, 0, 0, 1, tzinfo=timezone.utc)
    assert trig.get_next_fire_time(None, start).second == 5


def test_globs_env_vars_and_unmatched_globs(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "docs").mkdir()
    for name in ("x.md", "y.md", "z.txt"):
        (tmp_path / "docs" / name).write_text("hi")
    monkeypatch.setenv("KGP_TEST_DOCS", str(tmp_path / "docs"))
    path = _write(
        tmp_path / "g.toml",
        'name = "g"\ncorpus = "c"\n[sources]\npaths = ["${KGP_TEST_DOCS}/*.md", "nothing/*.pdf"]\n',
    )
    spec = load_spec(path)
    got = spec.resolved_paths()
    assert got[:2] == [tmp_path / "docs" / "x.md", tmp_path / "docs" / "y.md"]
    assert got[2] == tmp_path / "nothing" / "*.pdf"  # kept, so ingestion reports it missing


def test_duplicate_names_and_unknown_job(tmp_path: Path) -> None:
    body = 'corpus = "c"\n[sources]\npaths = ["d"]\n'
    _write(tmp_path / "one.toml", 'name = "same"\n' + body)
    with pytest.raises(JobError, match="known jobs: same"):
        find_spec(tmp_path, "other")
    _write(tmp_path / "two.toml", 'name = "same"\n' + body)
    with pytest.raises(JobError, match="two job specs"):
        load_specs(tmp_path)


def test_llm_profile_overrides_settings_without_storing_keys(tmp_path: Path, monkeypatch) -> None:
    from kg_platform.config import Settings
    from kg_platform.jobs.runner import job_settings

    monkeypatch.setenv("KGP_TEST_LLM_KEY", "sk-test")
    path = _write(
        tmp_path / "l.toml",
        'name = "l"\ncorpus = "c"\n[sources]\npaths = ["d"]\n'
        "[options]\nchunk_tokens = 64\nlevels = 3\n"
        '[options.llm]\nmodel = "m"\nbase_url = "http://x/v1"\n'
        'api_key_env = "KGP_TEST_LLM_KEY"\n',
    )
    base = Settings()
    cfg = job_settings(load_spec(path), base)
    assert (cfg.segment.chunk_tokens, cfg.segment.levels) == (64, 3)
    assert cfg.llm.model == "m" and cfg.llm.api_key.get_secret_value() == "sk-test"
    assert base.segment.chunk_tokens != 64 or base.llm.model != "m"


def test_engine_options_reach_the_ingest_settings(tmp_path: Path) -> None:
    from kg_platform.config import Settings
    from kg_platform.jobs.runner import job_settings

    body = 'name = "r"\ncorpus = "c"\n[sources]\npaths = ["d"]\n[options]\n'
    path = _write(
        tmp_path / "r.toml", body + 'engine = "ray"\nray_address = "auto"\nray_workers = 3\n'
    )
    base = Settings()
    cfg = job_settings(load_spec(path), base)
    assert (cfg.ingest.engine, cfg.ingest.ray_address, cfg.ingest.ray_workers) == ("ray", "auto", 3)
    assert base.ingest.engine == "local"
    assert job_settings(load_spec(_write(tmp_path / "l.toml", body)), base).ingest.engine == "local"
    with pytest.raises(JobError, match="engine"):
        load_spec(_write(tmp_path / "bad.toml", body + 'engine = "spark"\n'))
