"""Operators' overrides of the tuning: ``[tuning.<section>]`` in ``kgp.toml`` and
``KGP_TUNING__<SECTION>__<NAME>`` in the environment.

Why a module of its own: most of :mod:`kg_platform.tuning` was fitted on the bench data or
follows a paper, and only the lab varies it. A few of its values are instead limits of a
deployment that an operator must be able to set in production: how long to wait for Neo4j, how
many threads and ingestion workers a server runs, how many failed authentications it tolerates,
the job lease. :data:`OPERATOR_VALUES` names them; this module reads them from the file and the
environment (below keyword arguments, above the former setting names), refuses any other tuning
name there (a fitted constant is the lab's: ``[lab.tuning.<section>]``) and refuses a value out
of bounds with the field's name and bounds. ``docs/settings.md`` lists them under "Advanced
tuning" (:mod:`kg_platform.settings_docs`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

import annotated_types as at
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import PydanticBaseSettingsSource

from kg_platform.errors import ConfigError
from kg_platform.tuning import Tuning

__all__ = ["OPERATOR_VALUES", "TuningEnv", "env_name", "field_bounds", "operator_fields", "read"]

#: The tuning values an operator may set, by section: limits of a deployment, not fitted values.
OPERATOR_VALUES: dict[str, tuple[str, ...]] = {
    "neo4j": ("start_timeout_s", "retry_s", "connect_timeout_s"),
    "ingest": ("max_source_tokens",),
    "local_llm": ("n_ctx", "chat_format", "start_timeout_s"),
    "reasoning": ("store_trajectories",),
    "jobs": ("lease_s", "misfire_grace_s"),
    "serve": ("threads", "ingest_workers", "auth_fail_limit", "auth_fail_window_s"),
    "rerank": ("state_cache_mb",),
}

ENV_PREFIX = "KGP_TUNING__"


def env_name(section: str, name: str) -> str:
    """``KGP_TUNING__<SECTION>__<NAME>``."""
    return f"{ENV_PREFIX}{section.upper()}__{name.upper()}"


def _model(section: str) -> type[BaseModel]:
    model = Tuning.model_fields[section].annotation
    assert isinstance(model, type) and issubclass(model, BaseModel)
    return model


def operator_fields() -> list[tuple[str, str, FieldInfo]]:
    """``(section, name, field)`` of every operator value, in :data:`OPERATOR_VALUES` order."""
    return [
        (section, name, _model(section).model_fields[name])
        for section, names in OPERATOR_VALUES.items()
        for name in names
    ]


def field_bounds(field: FieldInfo) -> str:
    """A field's bounds as a person reads them: ``>= 1, <= 1_024``, ``matches `...```."""
    parts = []
    for m in field.metadata:
        for cls, sign, attr in (
            (at.Ge, ">=", "ge"),
            (at.Gt, ">", "gt"),
            (at.Le, "<=", "le"),
            (at.Lt, "<", "lt"),
        ):
            if isinstance(m, cls):
                parts.append(f"{sign} {getattr(m, attr):_}")
        pattern = getattr(m, "pattern", None)
        if pattern:
            parts.append(f"matches `{pattern}`")
    return ", ".join(parts)


def _where(section: str, name: str) -> str:
    return f"[tuning.{section}] {name} in kgp.toml or {env_name(section, name)}"


def read(values: Any) -> dict[str, dict[str, Any]]:
    """The operator's ``tuning`` table (``{section: {name: value}}``, from keyword arguments,
    the environment and ``kgp.toml`` merged), each value checked and converted. Raises
    :class:`~kg_platform.errors.ConfigError` for a name that is not an operator value and for a
    value its field refuses, naming the field and its bounds."""
    if not values:
        return {}
    allowed = ", ".join(f"{s}.{n}" for s, names in OPERATOR_VALUES.items() for n in names)
    if not isinstance(values, Mapping) or not all(isinstance(v, Mapping) for v in values.values()):
        raise ConfigError(
            "the tuning table must hold sections of values ([tuning.serve] then threads = 16)",
            hint=f"the values an operator may set: {allowed}",
        )
    out: dict[str, dict[str, Any]] = {}
    for section, table in values.items():
        for name, value in table.items():
            if name not in OPERATOR_VALUES.get(section, ()):
                fitted = section in Tuning.model_fields and name in _model(section).model_fields
                raise ConfigError(
                    f"tuning.{section}.{name} is "
                    + (
                        "a fitted or paper value, not one an operator sets"
                        if fitted
                        else "not a tuning value"
                    ),
                    hint=(
                        f"the lab varies it with [lab.tuning.{section}] {name}; " if fitted else ""
                    )
                    + f"the values an operator may set: {allowed} (docs/settings.md, "
                    "Advanced tuning)",
                )
            model = _model(section)
            try:
                checked = model.model_validate({name: value})
            except ValidationError as exc:
                reason = "; ".join(e["msg"] for e in exc.errors())
                bounds = field_bounds(model.model_fields[name])
                raise ConfigError(
                    f"tuning.{section}.{name} = {value!r} is refused: {reason}"
                    + (f" (bounds: {bounds})" if bounds else ""),
                    hint=f"set {_where(section, name)} "
                    + (f"within {bounds}" if bounds else "to a valid value"),
                ) from None
            out.setdefault(section, {})[name] = getattr(checked, name)
    return out


def _env_value(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw


class TuningEnv(PydanticBaseSettingsSource):
    """Reads ``KGP_TUNING__<SECTION>__<NAME>`` variables into the settings' ``tuning`` table
    (a number or ``true``/``false`` as JSON, anything else as text). A variable naming no
    operator value is kept, so :func:`read` refuses it by name."""

    def get_field_value(
        self, field: Any, field_name: str
    ) -> tuple[Any, str, bool]:  # pragma: no cover
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        found: dict[str, dict[str, Any]] = {}
        for env, raw in os.environ.items():
            if not env.upper().startswith(ENV_PREFIX) or raw == "":
                continue
            rest = env[len(ENV_PREFIX) :].lower()
            section, _, name = rest.partition("__")
            found.setdefault(section, {})[name or "?"] = _env_value(raw)
        return {"tuning": found} if found else {}
