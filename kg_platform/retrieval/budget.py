"""A token budget instead of a count: what a caller with a context window of N tokens asks for.

The cut is the one ``kgp eval --budget-tokens`` scores: the longest prefix of the ranking
within the budget, the item that crosses it truncated to the tokens left (so a budget is
filled, and a first item longer than the budget still returns its opening).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from kg_platform.errors import RetrievalError
from kg_platform.retrieval.base import RetrievedItem
from kg_platform.tokens import count_tokens, truncate_tokens

__all__ = ["cut_to_budget", "items_for_budget", "prefix_within"]

#: the shortest item a strategy returns is about a sentence piece; asking for budget / this
#: many items leaves enough candidates to fill the budget
TOKENS_PER_ITEM_FLOOR = 32
MAX_ITEMS = 200


def items_for_budget(k: int, max_tokens: int) -> int:
    """Items to ask a strategy for so that ``max_tokens`` can be filled."""
    if max_tokens < 1:
        raise RetrievalError(
            f"a token budget must be at least 1, got {max_tokens}",
            hint="give max_tokens >= 1, or k instead",
        )
    return min(MAX_ITEMS, max(k, -(-max_tokens // TOKENS_PER_ITEM_FLOOR)))


def prefix_within(texts: Sequence[str], max_tokens: int) -> list[str]:
    """The texts of the longest prefix of ``texts`` within ``max_tokens``, the one that crosses
    it truncated to the tokens left: the one budget rule, for retrieved items and for the
    reasoner's evidence alike."""
    out: list[str] = []
    left = max_tokens
    for text in texts:
        n = count_tokens(text)
        if n <= left:
            out.append(text)
            left -= n
        else:
            out.append(truncate_tokens(text, left))
            left = 0
        if left == 0:
            break
    return out


def cut_to_budget(items: Sequence[RetrievedItem], max_tokens: int) -> list[RetrievedItem]:
    """The longest prefix of ``items`` within ``max_tokens``; the crossing item cut to fit."""
    kept = prefix_within([it.text for it in items], max_tokens)
    return [
        it if text == it.text else dataclasses.replace(it, text=text, tokens=count_tokens(text))
        for it, text in zip(items, kept)
    ]
