"""The document rerank: the late scores plus where each candidate sits in its document.

Inside one paper the late rerank reads most of the paper (its 30 candidates are often the whole
paper), so what decides the answer is how the candidates are ordered, and cosine + MaxSim alone
ignore what the graph knows about each one: which section it is in and whether its neighbours
and section-mates also match, where the section sits in the paper, and how many tokens of the
budget it costs. A logistic model over those features (:data:`FEATURES`), fitted on QASPER's
train split (``kgp lab rerank fit-structure``), orders the candidates instead of the fixed sum.

Where it runs (``rerank.structure``): ``auto`` where the scope holds long documents, like the
query head; ``on`` everywhere a graph answers; ``off`` never. A candidate the graph has no place
for (a piece, a chunk without a section) gets the features' neutral values.

The weights ship as ``kg_platform/models/rerank/structure-rerank.weights.json`` with a
provenance file (``structure-rerank.json``: the weights' sha256, data, fit, check); a weights
file that does not match its sha256 is refused, since a changed file would rerank silently
differently.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from kg_platform.errors import ConfigError
from kg_platform.tuning import file_sha256
from kg_platform.retrieval.rerank.late_interaction import min_max

if TYPE_CHECKING:
    from kg_platform.retrieval.base import RetrievalContext

MODELS = Path(__file__).resolve().parents[2] / "models" / "rerank"
SHIPPED_WEIGHTS = MODELS / "structure-rerank.weights.json"
SHIPPED_PROVENANCE = MODELS / "structure-rerank.json"
QUERY = "retrieval/structure_context"

#: the model's inputs, in order (each candidate's, over the reranked candidates)
FEATURES = (
    "late",  # min-max cosine + min-max MaxSim: the rerank's fixed sum
    "cosine",  # min-max cosine
    "maxsim",  # min-max MaxSim
    "neighbour_late",  # best late score of the chunks just before and after it in its section
    "neighbours",  # how many of those two are candidates (/ 2)
    "section_best",  # best late score of the other candidates in its section
    "section_mean",  # their mean
    "section_count",  # how many they are (/ 10)
    "section_place",  # its section's place in the document (0 first, 1 last)
    "section_first",  # 1 for the first chunk of its section
    "place_in_section",  # its place in its section (0 first, 1 last)
    "length",  # its tokens / 300, at most 2 (a long chunk costs more of the budget)
    "rank",  # 1 for the strategy's first candidate, falling linearly to 0
)


def features(
    cosine: np.ndarray, maxsim: np.ndarray, places: Sequence[Mapping[str, Any] | None]
) -> np.ndarray:
    """The :data:`FEATURES` of each candidate ([candidates, features]) from its cosine and
    MaxSim and its row of ``retrieval/structure_context`` (``None``: no place known)."""
    cos, sim = min_max(np.asarray(cosine, np.float64)), min_max(np.asarray(maxsim, np.float64))
    late = cos + sim
    m = len(late)
    rows = [dict(p) if p else {} for p in places]
    at = {(r.get("section"), r.get("ord")): k for k, r in enumerate(rows) if r}
    by_section: dict[Any, list[int]] = defaultdict(list)
    for k, r in enumerate(rows):
        if r:
            by_section[r.get("section")].append(k)
    out = np.zeros((m, len(FEATURES)), dtype=np.float64)
    for k, r in enumerate(rows):
        ordinal, section = int(r.get("ord") or 0), r.get("section")
        near = [late[j] for d in (-1, 1) if (j := at.get((section, ordinal + d))) is not None]
        mates = [late[j] for j in by_section.get(section, []) if j != k] if r else []
        out[k] = (
            late[k],
            cos[k],
            sim[k],
            max(near) if near else 0.0,
            len(near) / 2,
            max(mates) if mates else 0.0,
            float(np.mean(mates)) if mates else 0.0,
            len(mates) / 10,
            int(r.get("sord") or 0) / max(int(r.get("last_sord") or 1), 1),
            float(bool(r) and ordinal == 0),
            ordinal / max(int(r.get("section_chunks") or 1) - 1, 1),
            min(int(r.get("tokens") or 0) / 300, 2.0),
            1 - k / max(m - 1, 1),
        )
    return out


@dataclass(frozen=True)
class StructureModel:
    """Logistic weights over :data:`FEATURES`; a candidate's score is its log-odds."""

    coef: np.ndarray
    intercept: float

    def scores(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(x @ self.coef + self.intercept, dtype=np.float64)

    def to_json(self) -> dict[str, Any]:
        return {
            "features": list(FEATURES),
            "coef": [round(float(c), 6) for c in self.coef],
            "intercept": round(float(self.intercept), 6),
        }

    @classmethod
    def from_json(cls, raw: Mapping[str, Any], source: str) -> StructureModel:
        if list(raw.get("features", [])) != list(FEATURES):
            raise ConfigError(
                f"the structure rerank weights {source} were fitted on other features",
                hint="refit them (kgp lab rerank fit-structure) or set KGP_RERANK__STRUCTURE=off",
            )
        return cls(np.asarray(raw["coef"], np.float64), float(raw["intercept"]))


@lru_cache(maxsize=2)
def load_structure_model(
    path: Path = SHIPPED_WEIGHTS, provenance: Path = SHIPPED_PROVENANCE
) -> StructureModel:
    """The weights at ``path``, after checking they are the file ``provenance`` names."""
    if not path.is_file() or not provenance.is_file():
        raise ConfigError(
            f"the structure rerank's weights {path} or their provenance {provenance.name} are "
            "missing",
            hint="reinstall kg-platform (the files ship in the package), or set "
            "KGP_RERANK__STRUCTURE=off to rerank without them",
        )
    expected = json.loads(provenance.read_text(encoding="utf-8")).get("sha256")
    actual = file_sha256(path)
    if expected != actual:
        raise ConfigError(
            f"the structure rerank's weights {path} do not match their provenance (sha256 "
            f"{actual[:12]}..., expected {str(expected)[:12]}...)",
            hint="reinstall kg-platform, or set KGP_RERANK__STRUCTURE=off",
        )
    return StructureModel.from_json(json.loads(path.read_text(encoding="utf-8")), str(path))


def model_for(ctx: "RetrievalContext") -> StructureModel | None:
    """The model the late rerank orders with in this context, or ``None`` (the fixed sum):
    ``rerank.structure`` ``on`` wherever a graph answers, ``off`` never, ``auto`` where the scope
    holds long documents."""
    mode = ctx.settings.rerank.structure
    if mode == "off" or getattr(ctx, "graph", None) is None:
        return None
    if mode == "auto":
        if not ctx.shape().holds_documents:
            return None
    return load_structure_model()


def places(ids: Sequence[str], graph: Any) -> list[dict[str, Any] | None]:
    """Each id's row of ``retrieval/structure_context`` read from ``graph`` (a
    :class:`~kg_platform.graph.GraphClient`; ``None`` where the graph has none)."""
    if not ids:
        return []
    rows = graph.read(QUERY, ids=list(dict.fromkeys(ids)))
    found = {str(r["id"]): dict(r) for r in rows}
    return [found.get(i) for i in ids]


def structure_scores(
    model: StructureModel,
    cosine: np.ndarray,
    maxsim: np.ndarray,
    ids: Sequence[str],
    ctx: "RetrievalContext",
) -> np.ndarray:
    """The model's score of each candidate (higher first)."""
    return model.scores(features(cosine, maxsim, places(ids, ctx.graph)))


__all__ = [
    "FEATURES",
    "SHIPPED_PROVENANCE",
    "SHIPPED_WEIGHTS",
    "StructureModel",
    "features",
    "load_structure_model",
    "model_for",
    "places",
    "structure_scores",
]
