"""Coarse parts of speech from the pipeline's own attribute-ruler rules, without its Matcher.

Why: in ``en_core_web_sm`` the attribute ruler turns the tagger's fine tags (``NNS``, ``VBD``)
into the coarse parts of speech the extractor reads (``NOUN``, ``VERB``: noun chunks, the
determiners it strips, the verbs of its triples). It runs a spaCy Matcher over 179 rules, about
a seventh of the whole parse. Most of those rules set the morphology or the lemma, which the
extractor never reads; the ones that set a part of speech are single-token tests on the tag, the
lower-case form and the dependency label, plus two two-token ones. :class:`PosRules` applies
exactly those, in the ruler's order (a later rule wins, as in spaCy), with a dictionary lookup
per token, so the parts of speech are the ruler's own.

:func:`install` swaps the ruler for this component only when every rule is of a kind it
understands; a pipeline with other rules keeps its ruler.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

COMPONENT = "kgp_pos_rules"

_ATTRS: dict[str, Callable[[Any], Any]] = {
    "TAG": lambda t: t.tag_,
    "LOWER": lambda t: t.lower_,
    "DEP": lambda t: t.dep_,
    "IS_SPACE": lambda t: t.is_space,
}


class UnsupportedRule(ValueError):
    """A ruler rule this module cannot apply exactly (the ruler then stays)."""


def _test(attr: str, spec: Any) -> Callable[[Any], bool]:
    """A predicate on a token for one key of a Matcher token pattern."""
    if attr not in _ATTRS:
        raise UnsupportedRule(f"token attribute {attr}")
    get = _ATTRS[attr]
    if not isinstance(spec, dict):
        return lambda t: bool(get(t) == spec)
    if len(spec) != 1:
        raise UnsupportedRule(f"{attr}: {spec}")
    ((op, value),) = spec.items()
    if op == "IN":
        allowed = frozenset(value)
        return lambda t: get(t) in allowed
    if op == "NOT_IN":
        banned = frozenset(value)
        return lambda t: get(t) not in banned
    if op == "REGEX":
        pattern = re.compile(value)
        return lambda t: pattern.search(get(t)) is not None
    raise UnsupportedRule(f"{attr}: operator {op}")


@dataclass(frozen=True)
class _Rule:
    order: int  # the ruler's rule number: a later rule wins
    tests: tuple[tuple[Callable[[Any], bool], ...], ...]  # per token of the pattern
    index: int  # which token of the match gets the part of speech
    pos: str


class PosRules:
    """The part-of-speech rules of an attribute ruler (``ruler.patterns``), applied to a Doc."""

    def __init__(self, patterns: Sequence[dict[str, Any]]) -> None:
        from spacy.parts_of_speech import IDS

        self._ids = IDS
        single_by_tag: dict[str, list[_Rule]] = {}
        single_any: list[_Rule] = []
        self._multi: list[_Rule] = []
        for order, entry in enumerate(patterns):
            pos = entry.get("attrs", {}).get("POS")
            if pos is None:
                continue  # morphology or lemma only: nothing the extractor reads
            if pos not in IDS:
                raise UnsupportedRule(f"part of speech {pos}")
            for pattern in entry["patterns"]:
                if not isinstance(pattern, list) or not pattern:
                    raise UnsupportedRule(f"pattern {pattern!r}")
                rule = _Rule(
                    order,
                    tuple(
                        tuple(_test(attr, spec) for attr, spec in token.items())
                        for token in pattern
                    ),
                    int(entry.get("index", 0)),
                    pos,
                )
                if not -len(pattern) <= rule.index < len(pattern):
                    raise UnsupportedRule(f"index {rule.index} of {pattern!r}")
                if len(pattern) > 1:
                    self._multi.append(rule)
                    continue
                tag = pattern[0].get("TAG")
                if isinstance(tag, str):
                    single_by_tag.setdefault(tag, []).append(rule)
                elif isinstance(tag, dict) and set(tag) == {"IN"}:
                    for t in tag["IN"]:
                        single_by_tag.setdefault(t, []).append(rule)
                else:
                    single_any.append(rule)
        # per tag, every single-token rule that may match it, latest first (the first match wins)
        self._for_tag = {
            tag: sorted(rules + single_any, key=lambda r: -r.order)
            for tag, rules in single_by_tag.items()
        }
        self._any = sorted(single_any, key=lambda r: -r.order)

    def __call__(self, doc: Any) -> Any:
        best: list[int] = [-1] * len(doc)  # order of the rule that set each token's POS
        for i, token in enumerate(doc):
            for rule in self._for_tag.get(token.tag_, self._any):
                if all(test(token) for test in rule.tests[0]):
                    token.pos = self._ids[rule.pos]
                    best[i] = rule.order
                    break
        for rule in self._multi:
            width = len(rule.tests)
            for start in range(len(doc) - width + 1):
                if all(all(test(doc[start + k]) for test in rule.tests[k]) for k in range(width)):
                    target = start + (rule.index % width)
                    if rule.order > best[target]:
                        doc[target].pos = self._ids[rule.pos]
                        best[target] = rule.order
        return doc


def install(nlp: Any) -> bool:
    """Replace ``nlp``'s attribute ruler by :class:`PosRules` built from its rules; False (the
    ruler kept) when it has none or a rule this module cannot apply exactly."""
    from spacy.language import Language
    from spacy.pipeline import AttributeRuler

    if "attribute_ruler" not in nlp.pipe_names:
        return False
    ruler = nlp.get_pipe("attribute_ruler")
    if not isinstance(ruler, AttributeRuler):
        return False  # already replaced, or someone else's component
    patterns = ruler.patterns
    try:
        PosRules(patterns)  # every rule understood, or the ruler stays
    except UnsupportedRule:
        return False
    if not Language.has_factory(COMPONENT):
        Language.factory(COMPONENT, func=lambda nlp, name, patterns: PosRules(patterns))
    nlp.replace_pipe("attribute_ruler", COMPONENT, config={"patterns": patterns})
    return True


__all__ = ["COMPONENT", "PosRules", "UnsupportedRule", "install"]
