"""Settings that moved, were renamed or were removed, and the one release they keep working for.

Each entry maps a former setting (``section.name``, as written in ``kgp.toml`` or as
``KGP_SECTION__NAME``) to where it went:

* ``tuning.<section>.<name>``: a fitted constant, paper value or experiment switch now in
  :mod:`kg_platform.tuning`; the former setting still overrides it, with a warning;
* ``setting.<section>.<name>``: renamed inside the settings tree; the former name still sets the
  new one unless the new one is set too.

Both warn (:class:`SettingMovedWarning`) with the replacement's name: for the few tuning values
an operator sets (:data:`kg_platform.config_tuning.OPERATOR_VALUES`), their supported names
``[tuning.<section>] <name>`` and ``KGP_TUNING__<SECTION>__<NAME>``, which win over the former
ones. ``CHANGELOG.md`` lists the same moves; ``tests/unit/test_settings_surface.py`` checks the
two agree.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping
from typing import Any

from kg_platform.config_tuning import OPERATOR_VALUES
from kg_platform.config_tuning import env_name as tuning_env

#: The release after which the former names stop being read.
REMOVED_IN = "the release after 0.x (one release of warnings)"


class SettingMovedWarning(FutureWarning):
    """A former setting name was used; the message names its replacement."""


def _t(section: str, *names: str, at: str | None = None) -> dict[str, tuple[str, str]]:
    return {f"{section}.{n}": (f"tuning.{at or section}.{n}", "") for n in names}


_PROPAGATION_FILE = "kg_platform/models/propagation/layer-weights.json"
_WALK_FILE = "kg_platform/models/entity-walk/walk.json"
_SAGE_META = "the SAGE model's meta.json (kg_platform/models/sage/meta.json)"

#: former name -> (destination, where its shipped value now lives when that is a file)
MOVES: dict[str, tuple[str, str]] = {
    **_t("neo4j", "start_timeout_s", "retry_s", "connect_timeout_s"),
    **_t("segment", "min_sentence_tokens"),
    "segment.sage_threshold": ("tuning.segment.sage_threshold", _SAGE_META),
    "segment.sage_coarse_tokens": ("tuning.segment.sage_coarse_tokens", _SAGE_META),
    "segment.sage_coarse_mode": ("tuning.segment.sage_coarse_mode", _SAGE_META),
    **_t("piece_graph", "k_graph", "t_graph", "candidates", "rebuild_factor"),
    **_t(
        "ingest",
        "max_source_tokens",
        "embed_higher_levels",
        "level1_vectors",
        "piece_vectors",
        "hard_split_factor",
        "pipeline_batches",
    ),
    "segment.n_gra": ("setting.segment.levels", ""),
    "mog.fetch": ("setting.retrieve.fetch", ""),
    "propagation.fetch": ("setting.retrieve.fetch", ""),
    "entity_graph.fetch": ("setting.retrieve.fetch", ""),
    **_t(
        "mog",
        "fixed_level",
        "fixed_mogg_level",
        "zero_weight",
        "k_r",
        "normalise",
        "level_skip",
        "mogg_levels",
        "mogg_level_skip",
        "mogg_group_tokens",
        "mogg_seeds",
        "mogg_seed_index",
        "mogg_candidates_factor",
        "mogg_hops",
        "mogg_next_min_tokens",
    ),
    "mog.scoring": ("tuning.mog.scoring", "the strategies mog-bm25 and mog-dense"),
    **{
        f"propagation.{n}": (f"tuning.propagation.{n}", _PROPAGATION_FILE)
        for n in ("lam_c", "lam_d", "lam_i", "lam_p", "lam_e", "lam_t")
    },
    **_t("propagation", "k_per_layer", "aggregate"),
    **_t(
        "entity_graph",
        "question_finder",
        "seed_cos",
        "per_mention",
        "concept_weight",
        "chunk_seeds",
    ),
    **{
        f"entity_graph.{n}": (f"tuning.entity_graph.{n}", _WALK_FILE)
        for n in ("chunk_weight", "damping", "max_degree")
    },
    **_t("entity_graph", "width"),
    **_t("sage", "n_candidates", "min_k", "gradient", "scorer"),
    **_t("sage", "feedback_threshold", "feedback_rounds", at="reasoning"),
    **_t(
        "rerank", "n_candidates", "late_weight", "section_context", "query_stop_words", "quantize"
    ),
    **_t("local_llm", "model_alias", "n_ctx", "chat_format", "start_timeout_s"),
    **_t(
        "distill",
        "levels",
        "atomize_temperature",
        "max_questions",
        "max_entities",
        "entity_merge_cos",
        "name_quantize",
        "nlp_min_concept_mentions",
        "nlp_max_entities",
        "nlp_parse_process",
        "nlp_batch_chunks",
        "tag_sample_chunks",
        "max_tag_classes",
        "map_confidence",
    ),
    **_t(
        "reasoning",
        "feedback_bias",
        "max_passage_tokens",
        "evidence_chunks",
        "evidence_sentences",
        "store_trajectories",
    ),
    **_t(
        "decomposition",
        "max_rounds",
        "delta",
        "top_k_atoms",
        "chunk_level",
        "fallbacks",
        "backup_select",
        "max_proposals",
    ),
    **_t("jobs", "misfire_grace_s", "lease_s"),
    **_t("serve", "auth_fail_limit", "auth_fail_window_s", "threads", "ingest_workers"),
}


def setting_env_name(old: str) -> str:
    section, name = old.split(".")
    return f"KGP_{section.upper()}__{name.upper()}"


def replacement(old: str) -> str:
    """What a user reads in the warning: where ``old`` went and how the lab still sets it."""
    dest, lives = MOVES[old]
    kind, section, name = dest.split(".")
    if kind == "setting":
        return f"the setting {section}.{name} ({setting_env_name(f'{section}.{name}')})"
    where = f"its value ships in {lives}; " if lives else ""
    if old == "mog.scoring":
        return "the strategies mog-bm25 (bm25) and mog-dense (dense); mog is the hybrid"
    if name in OPERATOR_VALUES.get(section, ()):
        return (
            f"it is an operator's tuning value now: set [tuning.{section}] {name} in kgp.toml or "
            f"{tuning_env(section, name)} (docs/settings.md, Advanced tuning)"
        )
    return (
        f"{where}it is no longer a setting: kg_platform.tuning {section}.{name}, which the lab "
        f"sets with [lab.tuning.{section}] {name} or KGP_LAB__TUNING__{section.upper()}__"
        f"{name.upper()}"
    )


def _env_value(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def apply(
    data: dict[str, Any], environ: Mapping[str, str]
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """``data`` (the merged keyword arguments, environment and ``kgp.toml``) with every former
    name replaced: renamed ones set their new name, moved ones are returned as tuning overrides
    (``{section: {name: value}}``). Each former name found warns once per call."""
    out = dict(data)
    tuning: dict[str, dict[str, Any]] = {}
    for old, (dest, _lives) in MOVES.items():
        section, name = old.split(".")
        table = out.get(section)
        found = False
        value: Any = None
        if isinstance(table, Mapping) and name in table:
            found, value = True, table[name]
            out[section] = {k: v for k, v in table.items() if k != name}
        env = environ.get(setting_env_name(old))
        if env is not None and env != "":
            found, value = True, _env_value(env)
        if not found:
            continue
        warnings.warn(
            f"the setting {old} ({setting_env_name(old)}) is deprecated and is read for one more "
            f"release only: {replacement(old)}",
            SettingMovedWarning,
            stacklevel=2,
        )
        kind, new_section, new_name = dest.split(".")
        if kind == "setting":
            current = out.get(new_section)
            current = dict(current) if isinstance(current, Mapping) else {}
            if (
                new_name not in current
                and environ.get(setting_env_name(f"{new_section}.{new_name}")) is None
            ):
                current[new_name] = value
            out[new_section] = current
        else:
            tuning.setdefault(new_section, {})[new_name] = value
    return out, tuning
