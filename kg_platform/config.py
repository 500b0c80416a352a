"""Settings: one typed object built from defaults, an optional ``kgp.toml`` and the environment.

Precedence (highest first): explicit keyword arguments, environment variables, ``kgp.toml`` in the
working directory (or the file named by ``KGP_CONFIG``), then the defaults below. Nested sections
are set from the environment with a double underscore, e.g. ``KGP_RETRIEVE__K=8``.

Neo4j is the exception: the conventional ``NEO4J_URI``, ``NEO4J_USERNAME``, ``NEO4J_PASSWORD`` and
``NEO4J_DATABASE`` variables point the platform at any server (Docker, Aura); when ``NEO4J_URI`` is
set nothing is started locally.

The sections follow what a user configures: where the data lives (``neo4j``), the embedding
model (``embedding``), ingestion (``segment``, ``ingest``), retrieval (``retrieve``, ``mog``,
``sage``, ``rerank``), the LLM and what it does (``llm``, ``local_llm``, ``distill``,
``reasoning``), scheduled ingestion (``jobs``) and serving (``serve``). Every field has a
description and enforced bounds; ``docs/settings.md`` is generated from them
(``python -m kg_platform.settings_docs``).

Fitted constants, paper values and experiment switches are not settings: they are in
:mod:`kg_platform.tuning` (``settings.tuning``), read from the shipped files they were fitted
into. A setting that moved there or was renamed still works for one release, with a warning
naming its replacement (:mod:`kg_platform.config_moves`, ``CHANGELOG.md``). Settings that only
the lab reads are in ``kg_platform_lab.settings``.

The sections are declared by what they configure, in :mod:`kg_platform.config_ingest`,
:mod:`kg_platform.config_retrieve`, :mod:`kg_platform.config_llm` and
:mod:`kg_platform.config_serve`; import them from here. This module is the root: the sources and
their precedence, the former names and the tuning (:attr:`Settings.tuning`; the few values an
operator sets there, ``[tuning.<section>]``, are read by :mod:`kg_platform.config_tuning`).
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from platformdirs import user_cache_dir, user_data_dir
from pydantic import BaseModel, Field, PrivateAttr, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from kg_platform import config_moves, config_tuning
from kg_platform import tuning as tuning_values
from kg_platform.config_ingest import (
    EmbeddingSettings,
    IngestSettings,
    Neo4jSettings,
    SegmentSettings,
)
from kg_platform.config_llm import (
    DistillSettings,
    LLMSettings,
    LocalLLMSettings,
    ReasoningSettings,
)
from kg_platform.config_retrieve import (
    MoGSettings,
    RerankSettings,
    RetrieveSettings,
    SageSelectSettings,
)
from kg_platform.config_serve import JobsSettings, ServeSettings
from kg_platform.tuning import Tuning

__all__ = [
    "APP_NAME",
    "DistillSettings",
    "EmbeddingSettings",
    "IngestSettings",
    "JobsSettings",
    "LLMSettings",
    "LocalLLMSettings",
    "MoGSettings",
    "Neo4jSettings",
    "ReasoningSettings",
    "RerankSettings",
    "RetrieveSettings",
    "SageSelectSettings",
    "SegmentSettings",
    "ServeSettings",
    "Settings",
    "default_cache_dir",
    "default_data_dir",
    "get_settings",
    "with_values",
]

APP_NAME = "kg-platform"


_Model = TypeVar("_Model", bound=BaseModel)


def with_values(current: _Model, /, **values: Any) -> _Model:
    """``current`` with the fields given replaced, skipping ``None`` (an option left unset);
    validated, so a wrong value fails here with the field's name. Positional-only, so a field
    may be called anything (an LLM profile has a ``model``)."""
    changes = {k: v for k, v in values.items() if v is not None}
    if not changes:
        return current
    return type(current).model_validate(current.model_dump() | changes)


def default_data_dir() -> Path:
    return Path(os.environ.get("KGP_DATA_DIR") or user_data_dir(APP_NAME))


def default_cache_dir() -> Path:
    return Path(os.environ.get("KGP_CACHE_DIR") or user_cache_dir(APP_NAME))


class Settings(BaseSettings):
    """All kg-platform settings. Build with :func:`get_settings` (cached) or ``Settings()``."""

    model_config = SettingsConfigDict(
        env_prefix="KGP_",
        env_nested_delimiter="__",
        extra="ignore",
        toml_file=os.environ.get("KGP_CONFIG", "kgp.toml"),
    )

    # where data lives
    data_dir: Path = Field(
        default_factory=default_data_dir,
        description="the local Neo4j server's files and trained routers (KGP_DATA_DIR)",
    )
    cache_dir: Path = Field(
        default_factory=default_cache_dir,
        description="converted model files and the LLM response cache (KGP_CACHE_DIR)",
    )
    corpus: str = Field("default", description="default corpus name")
    neo4j: Neo4jSettings = Neo4jSettings()
    # embedding
    embedding: EmbeddingSettings = EmbeddingSettings()
    # ingestion
    segment: SegmentSettings = SegmentSettings()
    ingest: IngestSettings = IngestSettings()
    # retrieval
    retrieve: RetrieveSettings = RetrieveSettings()
    mog: MoGSettings = MoGSettings()
    sage: SageSelectSettings = SageSelectSettings()
    rerank: RerankSettings = RerankSettings()
    # LLM and what it does
    llm: LLMSettings = LLMSettings()
    local_llm: LocalLLMSettings = LocalLLMSettings()
    distill: DistillSettings = DistillSettings()
    reasoning: ReasoningSettings = ReasoningSettings()
    # scheduled ingestion
    jobs: JobsSettings = JobsSettings()
    serve: ServeSettings = ServeSettings()

    #: former settings now in kg_platform.tuning (read for one release, with a warning)
    _tuning_moved: dict[str, dict[str, Any]] = PrivateAttr(default_factory=dict)
    #: the operator's [tuning.<section>] / KGP_TUNING__* values (kg_platform.config_tuning)
    _tuning_operator: dict[str, dict[str, Any]] = PrivateAttr(default_factory=dict)
    #: set by with_tuning (the lab's per-run values)
    _tuning_explicit: dict[str, dict[str, Any]] = PrivateAttr(default_factory=dict)
    _tuning_cache: tuple[int, Tuning] | None = PrivateAttr(None)

    @model_validator(mode="wrap")
    @classmethod
    def _former_names(cls, data: Any, handler: Any) -> Any:
        moved: dict[str, dict[str, Any]] = {}
        operator: dict[str, dict[str, Any]] = {}
        if isinstance(data, dict):
            data = dict(data)
            operator = config_tuning.read(data.pop("tuning", None))  # refused here, by name
            data, moved = config_moves.apply(data, os.environ)
        out = handler(data)
        if moved:
            tuning_values.build(moved)  # a wrong value fails here, naming it
            out._tuning_moved = moved
            out._tuning_cache = None
        if operator:
            out._tuning_operator = operator
            out._tuning_cache = None
        return out

    @property
    def tuning(self) -> Tuning:
        """The fitted constants and internal limits (:mod:`kg_platform.tuning`): the shipped
        values, then former settings still given, the operator's ``[tuning]`` values
        (:mod:`kg_platform.config_tuning`), the lab's overrides, :meth:`with_tuning`'s."""
        generation, lab = tuning_values.process_overrides()
        cached = self._tuning_cache
        if cached is None or cached[0] != generation:
            built = tuning_values.build(
                self._tuning_moved, self._tuning_operator, lab, self._tuning_explicit
            )
            cached = self._tuning_cache = (generation, built)
        return cached[1]

    def with_tuning(self, **sections: dict[str, Any]) -> Settings:
        """A copy whose tuning has ``sections`` (``mog={"scoring": "bm25"}``) over this one's;
        for the lab's experiments and tests."""
        explicit = tuning_values.merge(self._tuning_explicit, sections)
        tuning_values.build(self._tuning_moved, self._tuning_operator, explicit)  # validate now
        out = self.model_copy()
        out._tuning_explicit = explicit
        out._tuning_cache = None
        return out

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (
            init_settings,
            _EnvAliases(settings_cls, _NEO4J_ENV),
            env_settings,
            config_tuning.TuningEnv(settings_cls),
            _EnvAliases(settings_cls, _OTHER_ENV_NAMES),
            TomlConfigSettingsSource(settings_cls),
        )

    @property
    def neo4j_home(self) -> Path:
        """Data, logs, config and the password file of the local server."""
        return self.data_dir / "neo4j"


#: The conventional Neo4j variables (no KGP_ prefix); they win over KGP_NEO4J__*.
_NEO4J_ENV = {
    "NEO4J_URI": ("neo4j", "uri"),
    "NEO4J_USERNAME": ("neo4j", "username"),
    "NEO4J_USER": ("neo4j", "username"),
    "NEO4J_PASSWORD": ("neo4j", "password"),
    "NEO4J_DATABASE": ("neo4j", "database"),
}
#: Other names a setting is read from; the section's own name (KGP_INGEST__...) wins.
_OTHER_ENV_NAMES = {"KGP_WRITE_BATCH_SIZE": ("ingest", "write_batch_size")}


class _EnvAliases(PydanticBaseSettingsSource):
    """Reads settings from environment variables named outside the ``KGP_<SECTION>__<FIELD>``
    scheme, given as ``{variable: (section, field)}``."""

    def __init__(self, settings_cls: type[BaseSettings], names: dict[str, tuple[str, str]]):
        super().__init__(settings_cls)
        self._names = names

    def get_field_value(
        self, field: Any, field_name: str
    ) -> tuple[Any, str, bool]:  # pragma: no cover
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        found: dict[str, dict[str, str]] = {}
        for env, (section, key) in self._names.items():
            if os.environ.get(env):
                found.setdefault(section, {})[key] = os.environ[env]
        return found


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings (environment read once)."""
    return Settings()
