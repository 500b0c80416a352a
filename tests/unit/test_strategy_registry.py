"""The strategy registry scans installed plug-ins once per process, not on every call: every SDK
call builds its strategy (and ``auto`` the one it picks), and a scan of the installed
distributions' entry points costs tens of milliseconds. A name still unknown after the first
scan triggers one more scan (a plug-in installed since), then the clear error."""

from __future__ import annotations

import importlib.metadata

import pytest

from kg_platform.config import Settings
from kg_platform.errors import RetrievalError
from kg_platform.retrieval import base
from kg_platform.retrieval.base import RetrievalContext, get_strategy, list_strategies


@pytest.fixture
def counted_scans(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    scans: list[str] = []
    real = importlib.metadata.entry_points

    def counting(**kwargs):  # type: ignore[no-untyped-def]
        scans.append(kwargs.get("group", ""))
        return real(**kwargs)

    monkeypatch.setattr(importlib.metadata, "entry_points", counting)
    monkeypatch.setattr(base, "_loaded", False)
    return scans


def _ctx() -> RetrievalContext:
    """A context naming a corpus: building a strategy for it reads nothing (a search over every
    corpus would first list the corpora, and there is no graph here)."""
    return RetrievalContext(graph=None, embedder=None, settings=Settings(), corpus="unit")  # type: ignore[arg-type]


def test_plugins_are_scanned_once_for_many_strategies(counted_scans: list[str]) -> None:
    names = list_strategies()
    assert {"hybrid", "entity", "auto"} <= set(names)
    for _ in range(5):
        get_strategy("hybrid", _ctx())
        get_strategy("auto", _ctx())
    assert counted_scans == [base.STRATEGY_ENTRY_POINTS]


def test_an_unknown_name_scans_again_then_says_what_exists(counted_scans: list[str]) -> None:
    get_strategy("bm25", _ctx())
    with pytest.raises(RetrievalError, match="unknown strategy 'no-such'") as err:
        get_strategy("no-such", _ctx())
    assert "hybrid" in str(err.value.hint)
    assert counted_scans == [base.STRATEGY_ENTRY_POINTS] * 2
