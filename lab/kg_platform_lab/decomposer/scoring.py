"""Answer scores against gold answers (PIKE-RAG paper: EM and token F1, max over aliases,
SQuAD-style normalisation: lower case, no punctuation, no articles, single spaces)."""

from __future__ import annotations

import re
import string
from collections import Counter

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)


def normalise_answer(text: str) -> str:
    text = (text or "").lower().translate(_PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match(prediction: str, golds: list[str]) -> float:
    p = normalise_answer(prediction)
    return float(any(p == normalise_answer(g) for g in golds if g))


def token_f1(prediction: str, golds: list[str]) -> float:
    best = 0.0
    p_tokens = normalise_answer(prediction).split()
    for gold in golds:
        g_tokens = normalise_answer(gold).split()
        if not p_tokens or not g_tokens:
            best = max(best, float(p_tokens == g_tokens and bool(gold)))
            continue
        common = Counter(p_tokens) & Counter(g_tokens)
        same = sum(common.values())
        if same == 0:
            continue
        precision, recall = same / len(p_tokens), same / len(g_tokens)
        best = max(best, 2 * precision * recall / (precision + recall))
    return best
