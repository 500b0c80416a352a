"""The document rerank ships in the package as the weights its provenance names, computes its
features from each candidate's place in its document as documented, and runs where
``rerank.structure`` says."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from kg_platform.config import Settings
from kg_platform.errors import ConfigError
from kg_platform.retrieval.rerank.structure import (
    FEATURES,
    SHIPPED_PROVENANCE,
    SHIPPED_WEIGHTS,
    StructureModel,
    features,
    file_sha256,
    load_structure_model,
    model_for,
)
from tests.support.contexts import known_scope_ctx

#: the weights fitted by `kgp lab rerank fit-structure` on QASPER's train split and measured on
#: bench/longdoc; refitted or changed weights must update this line, their provenance and the
#: lab's record together
SHIPPED_SHA256 = "10c552b12d6353ab9d65201017997c8910fab67bbecfbf67b41409a8f33e0431"


def test_the_shipped_weights_and_their_provenance_are_in_the_package() -> None:
    record = json.loads(SHIPPED_PROVENANCE.read_text())
    assert file_sha256(SHIPPED_WEIGHTS) == record["sha256"] == SHIPPED_SHA256
    assert record["data"]["licence"].startswith("CC BY 4.0")
    assert "fit-structure" in record["command"]
    raw = json.loads(SHIPPED_WEIGHTS.read_text())
    assert raw["features"] == list(FEATURES) and len(raw["coef"]) == len(FEATURES)
    model = load_structure_model()
    # fitted, not a placeholder: MaxSim counts more than cosine, and length costs
    coef = dict(zip(FEATURES, model.coef))
    assert coef["maxsim"] > coef["cosine"] and coef["length"] < 0


def test_changed_or_missing_weights_are_refused_with_what_to_do(tmp_path) -> None:
    weights, record = tmp_path / "w.json", tmp_path / "p.json"
    raw = json.loads(SHIPPED_WEIGHTS.read_text())
    raw["coef"][0] += 1.0
    weights.write_text(json.dumps(raw))
    shutil.copy(SHIPPED_PROVENANCE, record)
    with pytest.raises(ConfigError, match="do not match their provenance"):
        load_structure_model(weights, record)
    with pytest.raises(ConfigError, match="are missing"):
        load_structure_model(tmp_path / "absent.json", record)
    raw["features"] = raw["features"][:-1]
    with pytest.raises(ConfigError, match="other features"):
        StructureModel.from_json(raw, "w.json")


def _place(section: str, ordinal: int, *, sord: int = 1, chunks: int = 3, tokens: int = 150):
    return {
        "section": section,
        "ord": ordinal,
        "sord": sord,
        "last_sord": 4,
        "section_chunks": chunks,
        "tokens": tokens,
    }


def test_features_read_section_mates_neighbours_places_and_length() -> None:
    cosine = np.array([0.9, 0.5, 0.1, 0.3])
    maxsim = np.array([0.8, 0.6, 0.2, 0.2])
    places = [_place("a", 0), _place("a", 1, tokens=600), _place("b", 2, sord=4), None]
    x = dict(zip(FEATURES, features(cosine, maxsim, places).T))
    late = np.array([2.0, 0.4 / 0.8 + 0.4 / 0.6, 0.0, 0.25])
    assert x["late"] == pytest.approx(late)
    # the first two are neighbours in section a; the third has no candidate beside it
    assert x["neighbour_late"] == pytest.approx([late[1], late[0], 0.0, 0.0])
    assert x["neighbours"] == pytest.approx([0.5, 0.5, 0.0, 0.0])
    assert x["section_best"] == pytest.approx([late[1], late[0], 0.0, 0.0])
    assert x["section_count"] == pytest.approx([0.1, 0.1, 0.0, 0.0])
    assert x["section_place"] == pytest.approx([0.25, 0.25, 1.0, 0.0])
    assert x["section_first"] == pytest.approx([1.0, 0.0, 0.0, 0.0])
    assert x["place_in_section"] == pytest.approx([0.0, 0.5, 1.0, 0.0])
    assert x["length"] == pytest.approx([0.5, 2.0, 0.5, 0.0])  # capped at 2
    assert x["rank"] == pytest.approx([1.0, 2 / 3, 1 / 3, 0.0])


def _ctx(mode: str, *, sources: int, chunks: int):
    return known_scope_ctx(sources=sources, chunks=chunks, structure=mode)


def test_auto_orders_long_documents_only() -> None:
    assert Settings().rerank.structure == "auto"
    assert model_for(_ctx("auto", sources=2, chunks=60)) is load_structure_model()  # papers
    assert model_for(_ctx("auto", sources=800, chunks=820)) is None  # short passages
    assert model_for(_ctx("on", sources=800, chunks=820)) is load_structure_model()
    assert model_for(_ctx("off", sources=2, chunks=60)) is None
    bare = _ctx("on", sources=2, chunks=60)
    bare.graph = None  # texts reranked outside any graph have no places
    assert model_for(bare) is None
