"""Document parsing: one entry point, one parser per format, one document model.

    >>> from kg_platform.parsing import parse_file
    >>> doc = parse_file(Path("report.pdf"))      # -> ParsedDocument (section tree of blocks)

The parser is chosen by extension (:func:`supported_extensions`) and the content is checked
before parsing (a PDF must start with ``%PDF``, Office files must be the right ZIP package, text
formats must not be binary), so a misnamed file fails with a clear error instead of garbage.
Every failure is a :class:`~kg_platform.errors.ParseError` subclass with a ``hint``:
``UnsupportedFormat`` (unknown extension, PDF extra missing), ``EmptyDocument``,
``CorruptDocument`` (junk bytes, truncated or damaged files), ``EncryptedDocument`` and
``NeedsOCR`` (image-only PDF). Ingestion reports these per file and goes on with the batch.

Formats: PDF (PyMuPDF, optional extra ``pdf``), DOCX/PPTX/XLSX and HTML (markitdown -> Markdown
-> the Markdown parser), Markdown, plain text (streamed, encoding detected), e-mail (``.eml``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from kg_platform.errors import UnsupportedFormat
from kg_platform.parsing._files import RawFile, extension_of, open_raw
from kg_platform.parsing.model import Block, BlockKind, ParsedDocument, Section

Parser = Callable[[RawFile], ParsedDocument]

#: Version of what the parsers write: bump it whenever a change to any parser here changes the
#: section tree it returns for some file (headings, blocks, tables, text clean-up). Ingestion
#: records it in each source's pipeline signature (:func:`kg_platform.ingest.plan.pipeline_signature`),
#: so the next ingestion re-parses files whose bytes did not change but whose parse would.
#: A caller's own parser may carry a ``version`` attribute of its own for the same purpose.
PARSER_VERSION = "1"


def _pdf(raw: RawFile) -> ParsedDocument:
    from kg_platform.parsing.pdf import parse_pdf

    return parse_pdf(raw)


def _office(ext: str) -> Parser:
    def parse(raw: RawFile) -> ParsedDocument:
        from kg_platform.parsing.office import parse_office

        return parse_office(raw, ext)

    return parse


def _html(raw: RawFile) -> ParsedDocument:
    from kg_platform.parsing.html import parse_html

    return parse_html(raw)


def _markdown(raw: RawFile) -> ParsedDocument:
    from kg_platform.parsing.markdown import parse_markdown

    return parse_markdown(raw)


def _text(raw: RawFile) -> ParsedDocument:
    from kg_platform.parsing.text import parse_text

    return parse_text(raw)


def _eml(raw: RawFile) -> ParsedDocument:
    from kg_platform.parsing.eml import parse_eml

    return parse_eml(raw)


# Heavy libraries (PyMuPDF, markitdown) are imported only when a file of that kind arrives.
_PARSERS: dict[str, Parser] = {
    ".pdf": _pdf,
    ".docx": _office(".docx"),
    ".pptx": _office(".pptx"),
    ".xlsx": _office(".xlsx"),
    ".html": _html,
    ".htm": _html,
    ".xhtml": _html,
    ".md": _markdown,
    ".markdown": _markdown,
    ".txt": _text,
    ".text": _text,
    ".eml": _eml,
}


def supported_extensions() -> list[str]:
    """File extensions :func:`parse_file` accepts (lower case, with the dot)."""
    return sorted(_PARSERS)


def parse_file(path: Path | str) -> ParsedDocument:
    """Parse one file into a :class:`ParsedDocument`; raises a ``ParseError`` subclass."""
    path = Path(path)
    ext = extension_of(path)
    parser = _PARSERS.get(ext)
    if parser is None:
        raise UnsupportedFormat(
            f"{path}: no parser for {ext or 'files without an extension'}",
            hint="supported extensions: "
            + ", ".join(supported_extensions())
            + "; convert the file to one of them (plain text: rename it to .txt)",
        )
    from kg_platform.parsing.containers import check_container  # zip bombs, before any read

    check_container(path)
    return parser(open_raw(path))


__all__ = [
    "PARSER_VERSION",
    "Block",
    "BlockKind",
    "ParsedDocument",
    "Section",
    "parse_file",
    "supported_extensions",
]
