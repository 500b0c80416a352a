"""Plain text: encoding detection, counted replacement of invalid bytes, streamed paragraphs.

Text files can be large (logs, dumps, books), so the file is read in 1 MiB pieces through one
incremental decoder and cut into blank-line separated paragraphs as it goes: memory holds the
resulting paragraphs plus one piece, never a second copy of the whole file. Bytes that are invalid
in the detected encoding become U+FFFD and are counted; the count lands in
``ParsedDocument.warnings`` so nothing is dropped silently.
"""

from __future__ import annotations

import codecs
import contextvars
from collections.abc import Iterable, Iterator

from kg_platform.errors import EmptyDocument
from kg_platform.parsing._files import RawFile, bom_encoding, check_text_like
from kg_platform.parsing._tree import TreeBuilder
from kg_platform.parsing.model import ParsedDocument

MIME = "text/plain"
PIECE_CHARS = 1 << 20  # characters decoded per read
ERRORS = "kgp-count-replace"  # codec error handler: replace with U+FFFD and count the bytes

_invalid_bytes: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar(
    "kgp_invalid_bytes", default=None
)


def _count_and_replace(exc: UnicodeError) -> tuple[str, int]:
    if isinstance(exc, UnicodeDecodeError):
        counter = _invalid_bytes.get()
        if counter is not None:
            counter[0] += exc.end - exc.start
        return "\ufffd", exc.end
    raise exc


codecs.register_error(ERRORS, _count_and_replace)


# Single-byte encodings charset-normalizer often confuses (cp1257 vs cp1252 for French, say);
# when one of these is about as plausible as the winner, the Western one is chosen (the platform
# is English-first: its sentence splitter, prompts and benchmarks are English).
_PREFERRED = ("cp1252", "latin_1", "iso8859_15")
_CHAOS_WINDOW = 0.05


def detect_encoding(raw: RawFile) -> str:
    """Encoding of ``raw``: its BOM; else UTF-8 when the head is (mostly) UTF-8; else
    charset-normalizer's choice, biased to Western single-byte encodings among near-ties.

    UTF-8 is tried first because it is by far the most common and a valid UTF-8 head is almost
    never another encoding; a head that is pure ASCII is read as UTF-8 (a superset), so non-ASCII
    text further down still decodes. A head with valid multi-byte sequences and at most as many
    invalid bytes is damaged UTF-8: it stays UTF-8 and the invalid bytes are counted.
    """
    bom = bom_encoding(raw.head)
    if bom:
        return bom
    counter = [0]
    token = _invalid_bytes.set(counter)
    try:
        decoded = codecs.getincrementaldecoder("utf-8")(errors=ERRORS).decode(
            raw.head, final=raw.size <= len(raw.head)
        )
    finally:
        _invalid_bytes.reset(token)
    non_ascii = sum(1 for ch in decoded if ord(ch) > 127 and ch != "\ufffd")
    if counter[0] == 0 or (non_ascii and counter[0] <= non_ascii):
        return "utf-8"
    from charset_normalizer import from_bytes

    results = list(from_bytes(raw.head))
    if not results:
        return "utf-8"  # undecidable: decode as UTF-8 and report every invalid byte
    best = results[0]
    for result in results:
        if result.encoding in _PREFERRED and result.chaos <= best.chaos + _CHAOS_WINDOW:
            return codecs.lookup(result.encoding).name
    return codecs.lookup(best.encoding).name


def _invalid_warning(count: int, encoding: str) -> list[str]:
    if not count:
        return []
    return [f"{count} invalid byte(s) for encoding {encoding} were replaced by U+FFFD"]


def decode_small(raw: RawFile, encoding: str | None = None) -> tuple[str, list[str]]:
    """Decode a whole (small) text file; returns the text and the invalid-byte warnings.

    ``encoding`` overrides detection (e.g. an HTML ``<meta charset>``)."""
    encoding = encoding or detect_encoding(raw)
    counter = [0]
    token = _invalid_bytes.set(counter)
    try:
        text = raw.path.read_bytes().decode(encoding, errors=ERRORS)
    finally:
        _invalid_bytes.reset(token)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text, _invalid_warning(counter[0], encoding)


def paragraphs_from_lines(lines: Iterable[str]) -> Iterator[str]:
    """Group lines into blank-line separated paragraphs (trailing spaces stripped)."""
    para: list[str] = []
    for line in lines:
        if line.strip():
            para.append(line.rstrip())
        elif para:
            yield "\n".join(para)
            para = []
    if para:
        yield "\n".join(para)


def split_paragraphs(text: str) -> list[str]:
    return list(paragraphs_from_lines(text.splitlines()))


def _stream_lines(raw: RawFile, encoding: str) -> Iterator[str]:
    """Lines of the file, decoded piece by piece (universal newlines, no ``\\n``)."""
    with open(raw.path, encoding=encoding, errors=ERRORS, newline=None) as fh:
        carry: list[str] = []
        while piece := fh.read(PIECE_CHARS):
            parts = piece.split("\n")
            del piece
            if len(parts) == 1:  # a piece inside one very long line
                carry.append(parts[0])
                continue
            carry.append(parts[0])
            yield "".join(carry)
            carry = [parts[-1]]
            for k in range(1, len(parts) - 1):
                yield parts[k]
        if carry and any(carry):
            yield "".join(carry)


def parse_text(raw: RawFile) -> ParsedDocument:
    """Parse a plain-text file into one root section of paragraph blocks."""
    check_text_like(raw, "plain-text")
    encoding = detect_encoding(raw)
    builder = TreeBuilder()
    counter = [0]
    token = _invalid_bytes.set(counter)
    first_line: str | None = None
    try:
        for para in paragraphs_from_lines(_stream_lines(raw, encoding)):
            if first_line is None:
                first_line = para.split("\n", 1)[0].strip()
            builder.block(para, "text")
    finally:
        _invalid_bytes.reset(token)
    if first_line is None:
        raise EmptyDocument(
            f"{raw.path}: the file holds only whitespace",
            hint="remove it from the input or add content",
        )
    title = first_line if len(first_line) <= 120 else raw.path.stem
    return ParsedDocument(
        uri=raw.uri,
        title=title,
        mime=MIME,
        root=builder.finish(),
        sha256=raw.sha256,
        bytes=raw.size,
        warnings=_invalid_warning(counter[0], encoding),
        metadata={"encoding": encoding},
    )


__all__ = ["decode_small", "detect_encoding", "parse_text", "split_paragraphs"]
