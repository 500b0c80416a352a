"""A file on its way into a corpus: the changed-file record and how it becomes a parsed document.

Shared by both engines (:mod:`kg_platform.ingest.pipeline` parses in-process,
:mod:`kg_platform.ingest.ray_engine` on Ray workers), so a file reads the same wherever it is read.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from kg_platform._faults import fault_point
from kg_platform.errors import IngestionError
from kg_platform.parsing.model import ParsedDocument

Parser = Callable[[Path], ParsedDocument]

__all__ = ["Candidate", "Parser", "default_parser", "read_document"]


class Candidate(NamedTuple):
    """A file whose bytes or pipeline changed since it was last written: to be parsed."""

    path: Path
    uri: str
    sha256: str
    size: int


def default_parser() -> Parser:
    try:
        from kg_platform.parsing import parse_file
    except ImportError as exc:
        raise IngestionError(
            "no document parsers are available (kg_platform.parsing.parse_file is missing)",
            hint="install kg-platform with its parsers, or pass parser= to ingest_paths",
        ) from exc
    return parse_file


def parser_version(parser: Parser | None) -> str | None:
    """The version recorded in the pipeline signature for files read by ``parser``: the built-in
    parsers' :data:`~kg_platform.parsing.PARSER_VERSION` when ``parser`` is None (the default),
    else the caller's parser's own ``version`` attribute, if it has one."""
    if parser is not None:
        version = getattr(parser, "version", None)
        return str(version) if version is not None else None
    try:
        from kg_platform import parsing
    except ImportError:
        return None
    return parsing.PARSER_VERSION


def read_document(candidate: Candidate, parse: Parser | None = None) -> ParsedDocument:
    """Parse a changed file and stamp it with what was measured before (uri, hash, size)."""
    fault_point("parse")
    doc = (parse or default_parser())(candidate.path)
    doc.uri, doc.sha256, doc.bytes = candidate.uri, candidate.sha256, candidate.size
    return doc
