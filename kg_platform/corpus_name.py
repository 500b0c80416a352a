"""One rule for corpus names, checked wherever a name enters (ingest, retrieval, distillation).

Why: an empty name is ambiguous ("every corpus"? "no corpus"? the default one?), so it is refused
wherever a name enters instead of meaning different things in different places.
"""

from __future__ import annotations

import hashlib

from kg_platform.errors import ConfigError, CorpusNotFound

__all__ = ["MAX_CORPUS_CHARS", "check_corpus", "corpus_key", "corpus_not_found"]

#: the longest corpus name, in characters, at every door: the request contract of
#: :mod:`kg_platform.requests` and :func:`check_corpus` (SDK, ``kgp``, ingestion) share it
MAX_CORPUS_CHARS = 200


def corpus_key(name: str) -> str:
    """One Lucene token that stands for the corpus (``Piece.corpus_key``).

    Why: the piece graph's candidate search must stay inside one corpus *inside* the fulltext
    query (``+corpus_key:...``); filtering a global top-k afterwards starves when other corpora
    hold the same texts. A corpus name may hold any character, so it is hashed into a lowercase
    alphanumeric token the standard analyzer keeps whole.
    """
    return "ck" + hashlib.sha1(name.encode("utf-8")).hexdigest()[:24]


def check_corpus(name: str | None, *, optional: bool = False) -> str | None:
    """Return ``name`` unchanged if it is a usable corpus name; raise :class:`ConfigError` if not.

    ``optional=True`` accepts ``None`` (meaning "all corpora" for retrieval). A name is
    1..:data:`MAX_CORPUS_CHARS` characters, not blank, without NUL.
    """
    if name is None and optional:
        return None
    if name is None or not name.strip():
        raise ConfigError(
            f"the corpus name {name!r} is empty",
            hint="give a non-empty corpus name, or none at all to use the configured default"
            + ("" if not optional else " / search every corpus"),
        )
    if "\x00" in name:
        raise ConfigError(
            "the corpus name contains a NUL character",
            hint="use printable characters in corpus names",
        )
    if len(name) > MAX_CORPUS_CHARS:
        raise ConfigError(
            f"the corpus name has {len(name):,} characters; at most {MAX_CORPUS_CHARS} are allowed",
            hint=f"use a corpus name of 1..{MAX_CORPUS_CHARS} characters",
        )
    return name


def corpus_not_found(name: str) -> CorpusNotFound:
    """The one answer for a corpus the graph does not hold, at every door (SDK, CLI, HTTP, MCP,
    LangChain). The server gives the same words for a corpus the caller's key may not see, so
    the two cannot be told apart: keep it the only place they are written."""
    return CorpusNotFound(
        f"there is no corpus {name!r} in the graph",
        hint="`kgp corpus list` (GET /v1/corpora) shows the corpora; names are case-sensitive",
    )
