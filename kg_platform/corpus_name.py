"""One rule for corpus names, checked wherever a name enters (ingest, retrieval, distillation).

Why: an empty name used to mean "every corpus" to some strategies and "no corpus" to others, and
an empty ``--corpus ""`` silently fell back to the default corpus on ingest. Now it is refused.
"""

from __future__ import annotations

from kg_platform.errors import ConfigError

__all__ = ["check_corpus"]


def check_corpus(name: str | None, *, optional: bool = False) -> str | None:
    """Return ``name`` unchanged if it is a usable corpus name; raise :class:`ConfigError` if not.

    ``optional=True`` accepts ``None`` (meaning "all corpora" for retrieval).
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
    return name
