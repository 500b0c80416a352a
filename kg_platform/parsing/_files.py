"""Checks on the raw file that every parser needs before it reads a single byte of content.

One place decides whether a path is readable, empty, or obviously not what its extension claims
(binary junk saved as ``.txt``, a PDF renamed to ``.md``), and computes the content hash and size
the graph stores on ``(:Source)``. Parsers get a :class:`RawFile` and can trust it.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from kg_platform.errors import CorruptDocument, EmptyDocument, ParseError

HASH_PIECE = 1 << 20  # read 1 MiB at a time when hashing: bounded memory for any size
SNIFF_BYTES = 64 * 1024  # how much of the head we look at to judge "text or junk"
MAX_CONTROL_RATIO = 0.05  # > 5 % C0 control bytes (besides \t \n \r \f \v, ESC) = not text

_BOMS: tuple[tuple[bytes, str], ...] = (
    (b"\xef\xbb\xbf", "utf-8-sig"),
    (b"\xff\xfe\x00\x00", "utf-32"),  # the utf-16/32 codecs read the BOM and drop it
    (b"\x00\x00\xfe\xff", "utf-32"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
)

# Magic numbers of binary formats that people rename by accident; used to give a precise hint.
_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"%PDF-", "PDF (.pdf)"),
    (b"PK\x03\x04", "ZIP container (.docx/.pptx/.xlsx/.zip)"),
    (b"\x89PNG\r\n\x1a\n", "PNG image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"GIF8", "GIF image"),
    (b"\x1f\x8b", "gzip archive"),
    (b"\xd0\xcf\x11\xe0", "legacy MS Office file (.doc/.xls/.ppt)"),
    (b"\x7fELF", "ELF executable"),
)


@dataclass(frozen=True)
class RawFile:
    """A file that exists, is readable and not empty, with its content identity."""

    path: Path
    size: int
    sha256: str
    head: bytes  # the first SNIFF_BYTES bytes, for content sniffing

    @property
    def uri(self) -> str:
        return str(self.path)


def open_raw(path: Path) -> RawFile:
    """Stat, hash and sniff ``path``; raise a :class:`ParseError` the user can act on."""
    path = Path(path).expanduser().resolve()
    try:
        st = path.stat()
    except FileNotFoundError:
        raise ParseError(
            f"{path}: file not found",
            hint="check the path; the file may have been moved or deleted",
        ) from None
    except PermissionError:
        raise ParseError(
            f"{path}: permission denied",
            hint="make the file and its folders readable (chmod +r) or run as its owner",
        ) from None
    if path.is_dir():
        raise ParseError(
            f"{path}: is a directory, not a file",
            hint="pass a file, or use the ingestion command that walks folders",
        )
    if not path.is_file():
        raise ParseError(f"{path}: not a regular file", hint="pass a regular file")
    if st.st_size == 0:
        raise EmptyDocument(
            f"{path}: the file is empty (0 bytes)",
            hint="remove it from the input or re-export it with content",
        )
    digest = hashlib.sha256()
    head = b""
    size = 0
    try:
        with open(path, "rb") as fh:
            while piece := fh.read(HASH_PIECE):
                if not head:
                    head = piece[:SNIFF_BYTES]
                digest.update(piece)
                size += len(piece)
    except PermissionError:
        raise ParseError(
            f"{path}: permission denied",
            hint="make the file readable (chmod +r) or run as its owner",
        ) from None
    except FileNotFoundError:
        raise ParseError(
            f"{path}: the file vanished while it was being read",
            hint="re-run once the file is stable",
        ) from None
    except IsADirectoryError:  # pragma: no cover - raced with a rename
        raise ParseError(f"{path}: is a directory, not a file", hint="pass a file") from None
    except OSError as exc:
        raise ParseError(
            f"{path}: cannot read the file ({exc.strerror or exc})",
            hint="check the disk and the file permissions",
        ) from None
    if size == 0:
        raise EmptyDocument(
            f"{path}: the file is empty (0 bytes)",
            hint="remove it from the input or re-export it with content",
        )
    return RawFile(path=path, size=size, sha256=digest.hexdigest(), head=head)


def bom_encoding(head: bytes) -> str | None:
    """The encoding a byte-order mark announces, if the file starts with one."""
    for bom, name in _BOMS:
        if head.startswith(bom):
            return name
    return None


def binary_signature(head: bytes) -> str | None:
    """Name of a binary format whose magic number starts ``head`` (None when none matches)."""
    for magic, name in _SIGNATURES:
        if head.startswith(magic):
            return name
    return None


def check_text_like(raw: RawFile, declared: str) -> None:
    """Refuse binary content behind a text extension, with the reason and what to do.

    Text with a byte-order mark (UTF-16/32 legitimately contain NUL bytes) is accepted as is.
    Otherwise a NUL byte, a known binary magic number, or more than 5 % control bytes in the
    first 64 KiB means the file is not text.
    """
    head = raw.head
    if bom_encoding(head):
        return
    sig = binary_signature(head)
    if sig:
        raise CorruptDocument(
            f"{raw.path}: has a {declared} extension but its content is a {sig}",
            hint="rename the file with the extension that matches its content",
        )
    if b"\x00" in head:
        raise CorruptDocument(
            f"{raw.path}: has a {declared} extension but contains NUL bytes (binary data)",
            hint="this is not a text file; remove it from the input or convert it to text",
        )
    allowed = {9, 10, 11, 12, 13, 27}
    controls = sum(1 for b in head if (b < 32 and b not in allowed) or b == 127)
    if head and controls / len(head) > MAX_CONTROL_RATIO:
        raise CorruptDocument(
            f"{raw.path}: {controls} of the first {len(head)} bytes are control characters; "
            f"this does not look like {declared} text",
            hint="the file is binary or damaged; remove it from the input or re-export it",
        )


def extension_of(path: Path) -> str:
    """Lower-case extension including the dot (``.md``); ``.tar.gz``-style names keep the last."""
    return os.path.splitext(str(path))[1].lower()
