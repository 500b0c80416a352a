"""The entities a question names, found by the corpus's own entity keys: no NLP model at query time.

The distilled layer already holds every name worth seeding a walk from, each under its normalised
key (:func:`~kg_platform.distilling.common.normalise_name`). So instead of parsing the question
with spaCy (whose import and pipeline load cost a fresh process more than the rest of a one-shot
``kgp retrieve``), the question's word n-grams are looked up among those keys, and the longest
that exist win, as a gazetteer tags text. What this gives up is a name the corpus spells
differently from the question ("U.S." and "United States"): capitalised runs of words that match
no key are returned as names to look up by embedding instead, as the spaCy finder's named
entities are.

It also works on a layer the LLM extractor built, and wherever spaCy is not installed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kg_platform.distilling.common import normalise_name
from kg_platform.distilling.nlp import CONCEPT_TYPE
from kg_platform.graph import GraphClient

KEYS_QUERY = "retrieval/entity_keys"
#: longest n-gram looked up (a name such as "The Lord of the Rings: The Two Towers" fits)
MAX_WORDS = 8
#: words of a question read (a pasted page would otherwise send tens of thousands of keys)
MAX_QUESTION_WORDS = 200
#: words that open a question or glue a phrase: never the start or end of a name
_FUNCTION_WORDS = frozenset(
    "a an and are as at be by did do does for from had has have how in is it its of on or "
    "than that the their this to was were what when where which who whom whose why with".split()
)
_WORD = re.compile(r"\w+(?:[.'\u2019&-]\w+)*\.?", re.UNICODE)
_POSSESSIVE = re.compile(r"['\u2019]s\b")


@dataclass(frozen=True)
class QuestionMention:
    """A name in the question: its key, its words as written, and its type (the matched
    entity's; ``None`` for a capitalised name that matched no key, to be looked up by
    embedding)."""

    key: str
    name: str
    type: str | None


def words(question: str) -> list[tuple[int, int]]:
    """(start, end) character offsets of the question's words. A possessive ``'s`` is not part
    of its word (spaCy splits it off before the layer's names were keyed); a full stop stays
    only on an abbreviation (``"U.S."``), not at the end of a sentence."""
    return _tokens(question)[1]


def without_possessives(question: str) -> str:
    """The question with each possessive ``'s`` blanked (same length, so offsets hold)."""
    return _POSSESSIVE.sub("  ", question)


def _tokens(question: str) -> tuple[str, list[tuple[int, int]]]:
    """The question without possessives and its words' offsets into that text (:func:`words`)."""
    text = without_possessives(question)
    spans = []
    for match in _WORD.finditer(text):
        start, end = match.span()
        if text[end - 1] == "." and "." not in text[start : end - 1]:
            end -= 1
        spans.append((start, end))
    return text, spans


def singular(key: str) -> str:
    """``key`` with its last word singular (``"films"`` -> ``"film"``, ``"countries"`` ->
    ``"country"``): the extractor keys a noun phrase by its head's singular form."""
    head, _, last = key.rpartition(" ")
    if last.endswith("ies") and len(last) > 4:
        last = last[:-3] + "y"
    elif last.endswith("s") and not last.endswith("ss") and len(last) > 3:
        last = last[:-1]
    return f"{head} {last}" if head else last


def candidate_keys(question: str) -> dict[str, list[tuple[int, int, str]]]:
    """Every n-gram of up to :data:`MAX_WORDS` words (among the first
    :data:`MAX_QUESTION_WORDS`), keyed (as written and with its last word singular) -> the word
    spans ``(first, last + 1, surface)`` it covers. N-grams that start or end on a function word
    are left out: the layer's keys never do."""
    text, spans = _tokens(question)
    spans = spans[:MAX_QUESTION_WORDS]
    function = [text[s:e].lower() in _FUNCTION_WORDS for s, e in spans]
    out: dict[str, list[tuple[int, int, str]]] = {}
    for i, (start, _) in enumerate(spans):
        if function[i]:
            continue
        for j in range(i, min(i + MAX_WORDS, len(spans))):
            if function[j]:
                continue
            surface = text[start : spans[j][1]]
            key = normalise_name(surface)
            if len(key) < 2 or not any(ch.isalpha() for ch in key):
                continue
            for variant in dict.fromkeys((key, singular(key))):
                out.setdefault(variant, []).append((i, j + 1, surface))
    return out


def capitalised_names(question: str) -> list[tuple[int, int, str]]:
    """Runs of capitalised words (``"Sweetgrass"``, ``"Bank of America"``: ``of``/``the``/``de``
    inside a run), the question's first word left out when it is a function word; a cheap
    stand-in for a named-entity tagger, used only for names no key matched."""
    text, spans = _tokens(question)
    texts = [text[s:e] for s, e in spans]
    names: list[tuple[int, int, str]] = []
    i = 0
    while i < len(spans):
        if not texts[i][:1].isupper() or texts[i].lower() in _FUNCTION_WORDS:
            i += 1
            continue
        j = i + 1
        while j < len(spans):
            if texts[j][:1].isupper() and texts[j].lower() not in _FUNCTION_WORDS:
                j += 1
            elif (
                texts[j].lower() in {"of", "the", "de"}
                and j + 1 < len(spans)
                and texts[j + 1][:1].isupper()
            ):
                j += 1
            else:
                break
        names.append((i, j, text[spans[i][0] : spans[j - 1][1]]))
        i = j
    return names


def longest_matches(
    found: dict[str, str], candidates: dict[str, list[tuple[int, int, str]]]
) -> list[tuple[int, int, str, str]]:
    """The matched n-grams ``(first, end, key, surface)`` that no longer match overlaps, longest
    first (then leftmost): "New York City" wins over "New York" and "City"."""
    matched = sorted(
        ((i, j, key, surface) for key in found for i, j, surface in candidates.get(key, ())),
        key=lambda m: (m[0] - m[1], m[0]),
    )
    taken: set[int] = set()
    kept: list[tuple[int, int, str, str]] = []
    for i, j, key, surface in matched:
        if taken.isdisjoint(range(i, j)):
            taken.update(range(i, j))
            kept.append((i, j, key, surface))
    return sorted(kept)


def question_mentions(
    graph: GraphClient, corpus: str | None, question: str
) -> list[QuestionMention]:
    """The question's mentions: its longest n-grams that are entity keys of ``corpus`` (typed
    as the entity is), then its capitalised names that overlap none of them (type ``None``).
    One read."""
    candidates = candidate_keys(question)
    if not candidates:
        return []
    rows = graph.read(KEYS_QUERY, keys=list(candidates), corpus=corpus)
    found = {r["key"]: r["type"] or CONCEPT_TYPE for r in rows}
    kept = longest_matches(found, candidates)
    mentions = [QuestionMention(key, surface, found[key]) for _, _, key, surface in kept]
    covered = {w for i, j, _, _ in kept for w in range(i, j)}
    seen = {m.key for m in mentions}
    for i, j, surface in capitalised_names(question):
        key = normalise_name(surface)
        if covered.isdisjoint(range(i, j)) and key not in seen and len(key) >= 2:
            seen.add(key)
            mentions.append(QuestionMention(key, surface, None))
    return mentions


__all__ = [
    "QuestionMention",
    "candidate_keys",
    "capitalised_names",
    "longest_matches",
    "question_mentions",
    "singular",
    "without_possessives",
    "words",
]
