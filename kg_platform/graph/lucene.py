"""Turn free question text into a safe Lucene query for Neo4j fulltext indexes.

``db.index.fulltext.queryNodes`` parses its argument with Lucene's classic query parser, so a
question such as ``"Who wrote 'AND' (1999)?"`` would be read as syntax (or fail to parse). We escape
every special character and lowercase the boolean operator words, so the text is a plain bag of
terms (Lucene ORs them and ranks with BM25, which is what MoG and MoGG expect).
"""

from __future__ import annotations

import re

#: Characters the classic Lucene query parser treats as syntax.
_SPECIAL = set('+-&|!(){}[]^"~*?:\\/')
_OPERATORS = re.compile(r"\b(AND|OR|NOT|TO)\b")


def escape_lucene(text: str) -> str:
    """Escape Lucene syntax so ``text`` is searched literally, term by term."""
    text = _OPERATORS.sub(lambda m: m.group(1).lower(), text)
    return "".join("\\" + ch if ch in _SPECIAL else ch for ch in text)


#: Lucene's BooleanQuery refuses more than 1,024 clauses (TooManyClauses); stay well below it.
MAX_TERMS = 1000
_TERM = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]|\w+")


def _terms(token: str) -> int:
    """An upper bound on the terms Lucene's standard analyzer makes of one whitespace token
    (word runs, and every CJK character on its own)."""
    return len(_TERM.findall(token))


#: Lucene's English stop set (``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET``), which our indexes
#: keep (Neo4j's default analyzer is ``standard-no-stop-words``).
STOP_WORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their "
    "then there these they this to was will with".split()
)
_EDGES = re.compile(r"^\W+|\W+$")


def _is_stop_word(token: str) -> bool:
    return _EDGES.sub("", token.replace("\\", "")).lower() in STOP_WORDS


def fulltext_query(text: str, max_terms: int = MAX_TERMS, drop_stop_words: bool = True) -> str:
    """The escaped query, or ``""`` when nothing searchable remains (callers then skip BM25).

    A question longer than ``max_terms`` terms keeps its first ``max_terms`` terms: BM25 over a
    very long question is dominated by its first thousand words anyway, and Lucene would
    otherwise fail the whole retrieval with TooManyClauses.

    English stop words are left out of the query (unless nothing else is left): they are in
    almost every text, so they barely move a BM25 ranking, but Lucene walks their postings,
    the longest of the index, so dropping them makes a fulltext call on a large index cheaper.
    """
    if not re.search(r"\w", text):
        return ""
    tokens = escape_lucene(text).split()
    if drop_stop_words:
        content = [t for t in tokens if not _is_stop_word(t)]
        tokens = content or tokens
    kept: list[str] = []
    budget = max_terms
    for token in tokens:
        cost = _terms(token)
        if cost > budget:
            break
        kept.append(token)
        budget -= cost
    return " ".join(kept)
