"""The token-budget cut of ``search(max_tokens=...)``: the longest prefix within the budget,
the crossing item truncated to the tokens left, nothing after it."""

from __future__ import annotations

import pytest

from kg_platform.errors import RetrievalError
from kg_platform.retrieval.base import RetrievedItem
from kg_platform.retrieval.budget import cut_to_budget, items_for_budget
from kg_platform.tokens import count_tokens


def _item(i: int, words: int) -> RetrievedItem:
    return RetrievedItem(id=f"c{i}", text=" ".join(["token"] * words), score=1.0 / (i + 1))


def test_the_prefix_within_the_budget_with_the_crossing_item_cut() -> None:
    items = [_item(0, 10), _item(1, 10), _item(2, 10)]
    per = count_tokens(items[0].text)
    cut = cut_to_budget(items, 2 * per + 3)
    assert [it.id for it in cut] == ["c0", "c1", "c2"]
    assert cut[0] is items[0] and cut[1] is items[1]
    assert count_tokens(cut[2].text) == 3 and cut[2].tokens == 3
    assert items[2].text.startswith(cut[2].text)  # the caller's item is left as it was
    assert sum(count_tokens(it.text) for it in cut) == 2 * per + 3
    assert [it.id for it in cut_to_budget(items, 2 * per)] == ["c0", "c1"]
    assert [it.id for it in cut_to_budget(items, 1)] == ["c0"]
    assert cut_to_budget([], 100) == []


def test_enough_items_are_asked_for_to_fill_the_budget() -> None:
    assert items_for_budget(5, 100) == 5
    assert items_for_budget(5, 1024) == 32
    assert items_for_budget(5, 10**6) == 200
    with pytest.raises(RetrievalError, match="at least 1"):
        items_for_budget(5, 0)
