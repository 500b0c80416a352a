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


def fulltext_query(text: str) -> str:
    """The escaped query, or ``""`` when nothing searchable remains (callers then skip BM25)."""
    words = re.findall(r"\w+", text)
    if not words:
        return ""
    return " ".join(escape_lucene(text).split())
