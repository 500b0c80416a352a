"""The lab's settings: router training, decomposer data collection and the bench data folder.

They are kept out of :class:`kg_platform.config.Settings` because only the lab reads them; a value
that the product reads too stays there. The product's fitted constants and experiment switches
(:mod:`kg_platform.tuning`: ``mog.scoring``, ``propagation.lam_c``, ...) are set for experiments in
the ``tuning`` table (``[lab.tuning.mog]`` then ``level_skip = 0``, or
``KGP_LAB__TUNING__MOG__LEVEL_SKIP=0``); every ``kgp lab`` command applies it
(:func:`apply_lab_tuning`) before it runs.

Sources, highest first: keyword arguments, environment variables with the prefix ``KGP_LAB__``
and ``__`` between a section and its field (``KGP_LAB__BENCH_DIR=../shared/bench``,
``KGP_LAB__ROUTER__MAX_EPOCHS=200``, ``KGP_LAB__DECOMPOSER__CORRECT_F1=0.7``), the ``[lab]``
table of the product's configuration file (``kgp.toml``, or the file named by ``KGP_CONFIG``;
e.g. ``[lab.router]`` then ``max_epochs = 200``), then the defaults below.
"""

from __future__ import annotations

import os
import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

ENV_PREFIX = "KGP_LAB__"


class RouterTrainingSettings(BaseModel):
    """``kgp lab router train`` / ``train-default``: the MoG / MoGG router's MLP and its training."""

    hidden: int = Field(
        256, ge=1, description="hidden width of the router MLP (the MoG paper leaves it open)"
    )
    dropout: float = Field(0.1, ge=0.0, lt=1.0, description="dropout after the hidden layer")
    lr: float = Field(1e-3, gt=0.0, description="Adam learning rate (the MoG paper's value)")
    max_epochs: int = Field(500, ge=1, description="upper bound on full-batch training epochs")
    patience: int = Field(
        30, ge=1, description="early stopping: epochs without a lower validation loss"
    )
    val_fraction: float = Field(
        0.2, gt=0.0, lt=1.0, description="share of the questions held out for early stopping"
    )
    label_scorer: Literal["embedding", "hitrate"] = Field(
        "embedding",
        description="how a level's best snippet is compared with the question's label: cosine "
        "of their embeddings (MoG paper) or the share of the label's words found in the snippet",
    )
    seed: int = Field(13, description="seed of the validation split and the initial weights")


class DecomposerCollectSettings(BaseModel):
    """``kgp lab decomposer collect``: PIKE-RAG Algorithm 2 (UCB context sampling).

    The question decomposition these runs share with ``kgp ask`` (rounds, ``delta``, proposals,
    the chunk level) is configured in the product's ``decomposition`` section.
    """

    ucb_alpha: float = Field(
        1.0, ge=0.0, description="exploration weight alpha of the UCB chunk sampling"
    )
    top_k_explore: int = Field(
        8, ge=1, description="K': atomic questions per proposal while exploring (the spec: 2K)"
    )
    delta_explore: float = Field(
        0.35,
        ge=-1.0,
        le=1.0,
        description="delta': cosine from which an atomic question is a near miss that credits "
        "its chunk (the spec: delta - 0.15)",
    )
    attempts: int = Field(3, ge=1, description="runs per question until one answers correctly")
    correct_f1: float = Field(
        0.8, ge=0.0, le=1.0, description="answer F1 from which a collected run counts as correct"
    )


class LabSettings(BaseSettings):
    """All settings of kg-platform-lab. Build with :func:`get_lab_settings` or ``LabSettings()``."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_nested_delimiter="__", extra="ignore"
    )

    bench_dir: Path = Field(
        Path("bench"),
        description="the bench data folder the lab's benchmarks read by default (dev/*.jsonl, "
        "dev/corpus, documents); a relative path is taken from the working directory",
    )
    router: RouterTrainingSettings = RouterTrainingSettings()
    decomposer: DecomposerCollectSettings = DecomposerCollectSettings()
    tuning: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="values over the product's kg_platform.tuning, {section: {name: value}} "
        "(e.g. mog = {scoring = 'bm25'}); validated against its sections and bounds",
    )

    @classmethod
    def settings_customise_sources(cls, settings_cls, init_settings, env_settings, **_unread):
        # pydantic-settings' hook; the dotenv and secrets-file sources (``_unread``) are not read
        return (init_settings, env_settings, _LabTableOfConfigFile(settings_cls))


class _LabTableOfConfigFile(PydanticBaseSettingsSource):
    """The ``[lab]`` table of ``kgp.toml`` (or of ``$KGP_CONFIG``); the product ignores it."""

    def get_field_value(
        self, field: Any, field_name: str
    ) -> tuple[Any, str, bool]:  # pragma: no cover
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        path = Path(os.environ.get("KGP_CONFIG", "kgp.toml"))
        if not path.is_file():
            return {}
        with path.open("rb") as fh:
            table = tomllib.load(fh).get("lab", {})
        return table if isinstance(table, dict) else {}


def apply_lab_tuning(settings: LabSettings | None = None) -> None:
    """Make the lab's ``tuning`` table the process's overrides of :mod:`kg_platform.tuning`
    (every product Settings object reads them through ``settings.tuning``)."""
    from kg_platform import tuning

    tuning.set_overrides((settings or get_lab_settings()).tuning)


@lru_cache(maxsize=1)
def get_lab_settings() -> LabSettings:
    """The process-wide lab settings (environment and file read once)."""
    return LabSettings()
