"""The late rerank's weights: how much the cosine, the MaxSim score, the strategy's own score and
the strategy's rank each count, per strategy.

Why per strategy: a fixed cosine + MaxSim sum throws away what the strategy knew (``propagate``'s
section and title layers, ``entity``'s walk over shared entities), and how much of that to keep
may differ by strategy. ``kgp lab rerank fit`` fits the weights on a set of questions and writes
a weights file; ``rerank.weights_file`` points the product at one (fitted on a deployment's own
questions), else the shipped ``kg_platform/models/rerank/late-weights.json`` is read.

What ships: one entry, for ``entity``, whose walk's rank counts twice as much as either text
term (the paragraph a shared entity leads to shares few words with the question, so cosine and
MaxSim alone undid the walk); chosen on the multi-hop dev sets and checked leaving each set out
(the file's ``entity_fit`` record). Every other strategy uses the unfitted rule, min-max(cosine)
+ ``rerank.late_weight`` x min-max(MaxSim). The file also records the fit that was tried on
QASPER's train split and why it was not kept (it did not hold on other questions).

The file also gives per-strategy candidate counts (``candidates``, :func:`candidates_for`): the
rerank reads ``entity``'s first 16 items and every other strategy's first 30, unless
``rerank.n_candidates`` forces one count.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg_platform.errors import ConfigError

if TYPE_CHECKING:
    from kg_platform.config import Settings

SHIPPED_WEIGHTS = Path(__file__).resolve().parents[2] / "models" / "rerank" / "late-weights.json"
#: candidates the rerank reorders for a strategy the weights file gives no count
DEFAULT_CANDIDATES = 30


@dataclass(frozen=True)
class LateWeights:
    """Weights of the rerank's terms (:func:`kg_platform.retrieval.rerank.late_interaction.combine`)."""

    cosine: float = 1.0
    maxsim: float = 1.0
    retrieval: float = 0.0  # min-max of the strategy's own score
    rank: float = 0.0  # 1 for the strategy's first candidate, falling linearly to 0

    def to_dict(self) -> dict[str, float]:
        return asdict(self)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> "LateWeights":
        unknown = set(raw) - set(cls.__dataclass_fields__)
        if unknown:
            raise ConfigError(
                f"unknown late-rerank weight(s) {sorted(unknown)}",
                hint=f"the weights are {', '.join(cls.__dataclass_fields__)}",
            )
        return cls(**{k: float(v) for k, v in raw.items()})


@lru_cache(maxsize=4)
def load_weights(path: Path = SHIPPED_WEIGHTS) -> dict[str, Any]:
    """The weights file as a dict (``default``, ``strategies`` and its provenance)."""
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"cannot read the late rerank's weights {path}: {exc}",
            hint="point KGP_RERANK__WEIGHTS_FILE at a file written by `kgp lab rerank fit`, or "
            "unset it to use the shipped file (reinstall kg-platform if that one is missing)",
        ) from exc
    if "default" not in data:
        raise ConfigError(f"{path} has no 'default' entry", hint="reinstall kg-platform")
    return data


def configured_weights(settings: "Settings") -> dict[str, Any]:
    """The weights file the settings point at (``rerank.weights_file``), else the shipped one."""
    path = settings.rerank.weights_file
    return load_weights(Path(path)) if path else load_weights()


def weights_for(strategy: str | None, settings: "Settings") -> LateWeights:
    """The weights the late rerank uses after ``strategy``, from ``rerank.weights_file`` (unset:
    the shipped file); see :func:`weights_in`."""
    return weights_in(configured_weights(settings), strategy, settings.tuning.rerank.late_weight)


def candidates_for(strategy: str | None, settings: "Settings") -> int:
    """How many of ``strategy``'s first items the late rerank reorders: ``rerank.n_candidates``
    when set, else the weights file's count for the strategy (its ``candidates`` map), else
    :data:`DEFAULT_CANDIDATES`.

    Why per strategy: the rerank's cost is reading each candidate's word pieces, and a strategy
    whose own order the rerank keeps (``entity``, whose walk's rank counts) loses nothing when
    fewer of its items are read (the shipped count's record is the file's ``candidates_fit``)."""
    forced = settings.tuning.rerank.n_candidates
    if forced is not None:
        return forced
    return candidates_in(configured_weights(settings), strategy)


def most_candidates(settings: "Settings") -> int:
    """The most candidates the rerank reorders for any strategy: what a caller fetches before
    the strategy is known (``auto`` chooses later)."""
    forced = settings.tuning.rerank.n_candidates
    if forced is not None:
        return forced
    data = configured_weights(settings)
    named = [candidates_in(data, name) for name in data.get("candidates", {})]
    return max([DEFAULT_CANDIDATES, *named])


def candidates_in(data: dict[str, Any], strategy: str | None) -> int:
    """``strategy``'s candidate count in a weights file's contents, else the default."""
    count = data.get("candidates", {}).get(strategy or "", DEFAULT_CANDIDATES)
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise ConfigError(
            f"the late rerank's candidate count for {strategy!r} is {count!r}, not a positive "
            "integer",
            hint="fix the weights file's 'candidates' entry, or give the lab tuning rerank.n_candidates",
        )
    return count


def weights_in(data: dict[str, Any], strategy: str | None, late_weight: float = 1.0) -> LateWeights:
    """``strategy``'s weights in a weights file's contents: its entry, else the file's
    ``default`` entry, else (``default`` null, as shipped) the unfitted rule with ``late_weight``."""
    entry = data.get("strategies", {}).get(strategy or "", data["default"])
    if entry is None:
        return LateWeights(cosine=1.0, maxsim=late_weight)
    return LateWeights.from_dict(entry)
