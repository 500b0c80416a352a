"""Which source titles a text names: a token trie over a corpus's titles, no LLM.

In encyclopedic corpora (one passage per article, the article's title on its Source) a passage
whose text names another passage's title refers to it; ``ingest/references.py`` turns those
mentions into ``(:Source)-[:REFERENCES]->(:Source)`` edges. This module is the matcher.

The rule, written to be precise rather than exhaustive:

- A title's *key* is the title without a trailing disambiguation in brackets
  (``"Move (1970 film)"`` -> ``"Move"``), split into word tokens (letters and digits, inner
  apostrophes kept: ``Ocean's``). Sources sharing a key are all named by it.
- Matching is on whole tokens and case-sensitive (``"The Family"`` names the article, ``"the
  family"`` does not), so a key never matches inside a word.
- A key is skipped when it is too weak to name an article: no token with a letter (``"1970"``),
  every token a stop word, or a single token shorter than ``min_chars`` (default 4).
- A one-token key (``"Paris"``, ``"Love"``) is the weakest: it does not count at the start of a
  sentence (any word is capitalised there), nor as part of a longer name (a capitalised word right
  before or after it: ``"West Virginia"`` does not name ``"Virginia"``, ``"Paris Hilton"`` not
  ``"Paris"``). When its title is disambiguated (``"Orgasm (album)"``: the bare word means
  something else first) it counts only in quotes, the way encyclopedias name a work.
- A text naming its own key is about itself: a source never references one that shares its key
  (duplicate passages, ``"Peter Pan (2003 film)"`` and ``"Peter Pan (1953 film)"``).
- A disambiguated name of several words inside a longer name (``"Jean-Jacques Rousseau"``) is
  someone else than ``"Jacques Rousseau (painter)"``.
- The rule looks at the text around a mention only, never at the other titles: an edge depends on
  its two sources alone, which is what lets the incremental update equal a full build.

Cost: building the trie is linear in the titles' tokens; scanning a text is linear in its tokens
times the longest key (a few tokens).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from kg_platform.granularity.bm25 import STOPWORDS

__all__ = ["TitleMatcher", "references", "title_key", "title_tokens", "phrase_of"]

_TOKEN = re.compile(r"\w+(?:['\u2019]\w+)*", re.UNICODE)
_DISAMBIGUATION = re.compile(r"\s*\([^()]*\)\s*$")
_SENTENCE_END = re.compile(r"[.!?:;]['\")\]]*\s*$")
_DISAMBIGUATION_PAGE = re.compile(r"\(disambiguation\)\s*$", re.IGNORECASE)
_POSSESSIVE = re.compile(r"['\u2019]s$")
_QUOTES = frozenset('"\u201c\u201d')
_HAS_LETTER = re.compile(r"[^\W\d_]", re.UNICODE)


def title_key(title: str) -> str:
    """The part of a title that a text names: without a trailing ``(disambiguation)``."""
    return _DISAMBIGUATION.sub("", title or "").strip()


def title_tokens(title: str) -> tuple[str, ...]:
    return tuple(_TOKEN.findall(title_key(title)))


def phrase_of(title: str) -> str:
    """The key's tokens joined by spaces (what a fulltext phrase query looks for)."""
    return " ".join(title_tokens(title))


def _eligible(tokens: tuple[str, ...], min_chars: int) -> bool:
    if not tokens or not any(_HAS_LETTER.search(t) for t in tokens):
        return False
    if all(t.lower() in STOPWORDS for t in tokens):
        return False
    if len(tokens) == 1 and len(tokens[0]) < min_chars:
        return False
    return True


@dataclass
class _Node:
    children: dict[str, "_Node"] = field(default_factory=dict)
    #: (source id, title disambiguated?) of the sources whose key ends here
    ids: list[tuple[str, bool]] = field(default_factory=list)


class TitleMatcher:
    """A token trie over ``(source id, title)`` pairs; :meth:`names` says which a text names."""

    def __init__(self, titles: Iterable[tuple[str, str]], *, min_chars: int = 4) -> None:
        self.min_chars = min_chars
        self._root = _Node()
        self.keys = 0
        for sid, title in titles:
            tokens = title_tokens(title)
            if _DISAMBIGUATION_PAGE.search(title or "") or not _eligible(tokens, min_chars):
                continue
            node = self._root
            for tok in tokens:
                node = node.children.setdefault(tok, _Node())
            if not node.ids:
                self.keys += 1
            node.ids.append((sid, title_key(title) != (title or "").strip()))

    @staticmethod
    def eligible(title: str, min_chars: int = 4) -> bool:
        if _DISAMBIGUATION_PAGE.search(title or ""):
            return False
        return _eligible(title_tokens(title), min_chars)

    @staticmethod
    def _count(
        found: dict[str, int],
        node: _Node,
        text: str,
        spans: list[tuple[str, int, int]],
        i: int,
        j: int,
    ) -> None:
        for sid, disambiguated in node.ids:
            if _mention(text, spans, i, j, disambiguated):
                found[sid] = found.get(sid, 0) + 1

    def names(self, text: str) -> dict[str, int]:
        """Source id -> how many times ``text`` names its title."""
        text = text or ""
        spans = [(m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(text)]
        found: dict[str, int] = {}
        for i in range(len(spans)):
            node: _Node | None = self._root
            j = i
            while node is not None and j < len(spans):
                token = spans[j][0]
                # a possessive names the key it ends ("Barrie's" names "J. M. Barrie")
                bare = _POSSESSIVE.sub("", token)
                if bare != token:
                    end = node.children.get(bare)
                    if end is not None:
                        self._count(found, end, text, spans, i, j)
                node = node.children.get(token)
                if node is not None:
                    self._count(found, node, text, spans, i, j)
                j += 1
        return found


def _mention(
    text: str, spans: list[tuple[str, int, int]], i: int, j: int, disambiguated: bool
) -> bool:
    """Whether the key on tokens ``i..j`` is a mention (see the module's rule)."""
    start, end = spans[i][1], spans[j][2]
    if j > i:
        # a disambiguated name inside a longer one is someone else ("Jean-Jacques Rousseau")
        return not (disambiguated and i > 0 and _joined(text, spans[i - 1], start))
    if disambiguated:
        return text[start - 1 : start] in _QUOTES and text[end : end + 1] in _QUOTES
    if _sentence_initial(text, start):
        return False
    if i > 0 and _joined(text, spans[i - 1], start):
        return False
    if i + 1 < len(spans) and _joined(text, spans[i + 1], end, after=True):
        return False
    return True


def _joined(text: str, other: tuple[str, int, int], at: int, *, after: bool = False) -> bool:
    """A capitalised word separated from the mention by spaces only (one longer name)."""
    token, start, end = other
    gap = (text[at:start] if after else text[end:at]).replace("-", " ")
    return token[:1].isupper() and (gap == "" or gap.isspace())


def _sentence_initial(text: str, start: int) -> bool:
    before = text[:start]
    return not before.strip() or bool(_SENTENCE_END.search(before[-8:]))


def references(
    matcher: TitleMatcher,
    titles: dict[str, str],
    source_id: str,
    texts: Iterable[str],
) -> dict[str, int]:
    """The sources that ``source_id``'s texts name -> mentions, without itself and without the
    sources that share its key (``titles``: source id -> title, every source of the corpus)."""
    own = title_key(titles.get(source_id, ""))
    out: dict[str, int] = {}
    for text in texts:
        for sid, n in matcher.names(text).items():
            if sid != source_id and title_key(titles.get(sid, "")) != own:
                out[sid] = out.get(sid, 0) + n
    return out
