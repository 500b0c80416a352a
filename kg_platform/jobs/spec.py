"""Declarative ingestion job specs: one TOML or YAML file per job in ``ingestion/``.

A spec says *what* to ingest (sources), *how* (options: granularities, segmenter, distillation
steps, LLM profile), *when* (a cron expression) and *how long run records are kept*. It is
validated by pydantic, so a typo is an error with the file name, never a silently ignored key::

    # ingestion/samples.toml
    name = "samples"
    corpus = "samples"
    schedule = "0 * * * *"          # cron: minute hour day-of-month month day-of-week

    [sources]
    paths = ["samples"]             # files, folders or globs; relative to this file's folder
    include = ["*.md", "*.html"]
    exclude = ["**/drafts/**"]

    [options]
    chunk_tokens = 128              # MoG level-1 budget; levels double from there
    levels = 5                      # MoG granularity levels
    distill = ["atomic"]            # needs an LLM; skipped with a note when none is configured
    engine = "ray"                  # optional: parse/plan/embed on Ray (ray_address, ray_workers)

    [options.llm]                   # the LLM profile of this job (overrides KGP_LLM__*)
    model = "gemma3-270m"
    base_url = "http://127.0.0.1:8080/v1"

    [retention]
    keep_runs = 50
    keep_days = 90

Paths may use ``${ENV_VAR}`` and ``~``; relative paths are resolved against the spec's folder so
the same spec works from cron, systemd and Kubernetes whatever the working directory.
"""

from __future__ import annotations

import glob
import os
import re
import tomllib
import warnings
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from kg_platform.config_moves import SettingMovedWarning
from kg_platform.errors import JobError

SPEC_SUFFIXES = (".toml", ".yaml", ".yml")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SourcesSpec(_Strict):
    """What to ingest: paths (files, folders, globs) filtered by include/exclude globs."""

    paths: list[str] = Field(min_length=1, description="files, folders or glob patterns")
    include: list[str] | None = Field(None, description="keep only files matching these globs")
    exclude: list[str] | None = Field(None, description="drop files matching these globs")
    prune: bool = Field(False, description="delete sources of the corpus that vanished")


class LLMProfile(_Strict):
    """The LLM used by this job's distillation steps; unset fields keep ``KGP_LLM__*``.

    The key itself is never written in a spec: ``api_key_env`` names the variable holding it.
    """

    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = Field(None, description="environment variable with the API key")
    temperature: float | None = None
    max_tokens: int | None = None
    concurrency: int | None = None
    timeout_s: float | None = None


class OptionsSpec(_Strict):
    """How to ingest. Unset fields keep the platform's settings."""

    chunk_tokens: int | None = Field(None, gt=8, description="token budget of a level-1 chunk")
    levels: int | None = Field(None, ge=1, le=6, description="number of MoG granularity levels")
    segmenter: Literal["fixed", "sage"] | None = None
    distill: list[Literal["atomic", "entities", "tags"]] = Field(
        default_factory=list, description="distillation steps run after ingestion (need an LLM)"
    )
    llm: LLMProfile | None = None
    engine: Literal["local", "ray"] | None = Field(
        None, description="ray: parse, plan and embed on Ray workers (writes stay in the runner)"
    )
    ray_address: str | None = Field(None, description="engine=ray: the Ray cluster to join")
    ray_workers: int | None = Field(None, ge=1, description="engine=ray: worker actors")

    @model_validator(mode="before")
    @classmethod
    def _former_names(cls, data: Any) -> Any:
        """``n_gra`` (the MoG paper's symbol) is read for one release as ``levels``, with the
        settings' :class:`~kg_platform.config_moves.SettingMovedWarning`."""
        if isinstance(data, dict) and "n_gra" in data:
            data = dict(data)
            value = data.pop("n_gra")
            warnings.warn(
                "the job option n_gra is deprecated and is read for one more release only: "
                "use levels",
                SettingMovedWarning,
                stacklevel=2,
            )
            data.setdefault("levels", value)
        return data


class RetentionSpec(_Strict):
    """How many ``(:IngestRun)`` records of this job are kept (older ones are deleted)."""

    keep_runs: int = Field(100, ge=1)
    keep_days: int | None = Field(None, ge=1)


class JobSpec(_Strict):
    """One ingestion job. ``path`` is where it was read from (set by the loader)."""

    name: str
    corpus: str
    description: str = ""
    schedule: str | None = Field(None, description="cron expression (5 fields); unset = manual")
    timezone: str = "UTC"
    enabled: bool = True
    sources: SourcesSpec
    options: OptionsSpec = OptionsSpec()
    retention: RetentionSpec = RetentionSpec()
    path: Path | None = Field(None, exclude=True)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError("use letters, digits, '.', '_' or '-' (max 64 characters)")
        return value

    @field_validator("schedule")
    @classmethod
    def _cron(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        try:
            cron_trigger(value, "UTC")
        except ValueError as exc:
            raise ValueError(f"invalid cron expression {value!r}: {exc}") from exc
        return value.strip()

    @property
    def base_dir(self) -> Path:
        return self.path.parent if self.path else Path.cwd()

    def resolved_paths(self) -> list[Path]:
        """Source paths with ``${VAR}``/``~`` expanded, globs expanded, relative to the spec.

        A glob that matches nothing is kept as written, so ingestion reports it as missing (a
        run "completed with errors") instead of silently ingesting nothing.
        """
        out: list[Path] = []
        for raw in self.sources.paths:
            expanded = os.path.expanduser(os.path.expandvars(raw))
            full = expanded if os.path.isabs(expanded) else str(self.base_dir / expanded)
            if glob.has_magic(full):
                hits = sorted(glob.glob(full, recursive=True))
                out.extend(Path(h) for h in hits or [full])
            else:
                out.append(Path(full))
        return out

    def trigger(self) -> Any:
        """The APScheduler cron trigger of this job (None when it has no schedule)."""
        return cron_trigger(self.schedule, self.timezone) if self.schedule else None


def cron_trigger(expr: str, tz: str) -> Any:
    """An APScheduler cron trigger from a 5-field crontab expression, or a 6-field one whose
    first field is the second (as in Quartz/Spring; handy for tests and frequent polling)."""
    from apscheduler.triggers.cron import CronTrigger

    fields = expr.split()
    if len(fields) == 5:
        fields = ["0", *fields]
    if len(fields) != 6:
        raise ValueError(f"expected 5 fields (or 6 with seconds first), got {len(fields)}")
    second, minute, hour, day, month, dow = fields
    # crontab numbers days from Sunday (0 or 7); APScheduler 3 from Monday: use names instead.
    dow = re.sub(
        r"\d+", lambda m: _DOW[int(m.group()) % 7] if int(m.group()) <= 7 else m.group(), dow
    )
    return CronTrigger(
        second=second, minute=minute, hour=hour, day=day, month=month, day_of_week=dow, timezone=tz
    )


_DOW = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")


def _read(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".toml":
        return tomllib.loads(text)
    import yaml

    data = yaml.safe_load(text)
    if not isinstance(data, dict):
        raise ValueError("the top level must be a mapping")
    return data


def load_spec(path: Path | str) -> JobSpec:
    """Read and validate one spec file; errors name the file and the offending field."""
    path = Path(path)
    try:
        data = _read(path)
        return JobSpec.model_validate({**data, "path": path.resolve()})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(top)'}: {e['msg']}" for e in exc.errors()
        )
        raise JobError(
            f"invalid job spec {path}: {problems}",
            hint="fix the file; `kgp jobs list` validates every spec",
        ) from exc
    except (OSError, ValueError, tomllib.TOMLDecodeError) as exc:
        raise JobError(
            f"cannot read job spec {path}: {exc}", hint="check the TOML/YAML syntax of the file"
        ) from exc


def spec_files(directory: Path) -> list[Path]:
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.is_file() and p.suffix in SPEC_SUFFIXES)


def load_specs(directory: Path | str) -> list[JobSpec]:
    """All specs of a folder (not recursive: ``deploy/`` and ``samples/`` are not specs)."""
    directory = Path(directory)
    specs = [load_spec(p) for p in spec_files(directory)]
    seen: dict[str, Path | None] = {}
    for spec in specs:
        if spec.name in seen:
            raise JobError(
                f"two job specs are named {spec.name!r}: {seen[spec.name]} and {spec.path}",
                hint="job names must be unique within a folder",
            )
        seen[spec.name] = spec.path
    return specs


def find_spec(directory: Path | str, name: str) -> JobSpec:
    """The spec named ``name`` in ``directory`` (or ``name`` itself when it is a spec file)."""
    as_path = Path(name)
    if as_path.suffix in SPEC_SUFFIXES and as_path.is_file():
        return load_spec(as_path)
    specs = load_specs(directory)
    for spec in specs:
        if spec.name == name:
            return spec
    known = ", ".join(s.name for s in specs) or "none"
    raise JobError(
        f"no job named {name!r} in {Path(directory).resolve()}",
        hint=f"known jobs: {known}; set KGP_JOBS__DIR (or the directory argument) for another folder",
    )
