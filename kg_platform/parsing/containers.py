"""Zip containers (DOCX, PPTX, XLSX, and any other zip-based format a parser opens) checked
before anything in them is read: a "zip bomb" is refused as a
:class:`~kg_platform.errors.CorruptDocument` from its central directory alone.

Why: the upload and file limits count compressed bytes; a 306 KB ``.docx`` whose
``docProps/core.xml`` unpacks to 300 MB took a server from 636 MB to 1.2 GB resident, and a 46 KB
one with a 30 MB ``word/document.xml`` kept a parser busy for 15 s. Reading the central
directory costs a few KB whatever the members hold. The sizes checked are the ones each member
declares; Python's ``zipfile`` (which every Office parser here reads through) never returns
more than a member declares, so a member cannot unpack to more than it was checked for.

Limits (constants, the same for every caller):

- :data:`MAX_UNCOMPRESSED_BYTES`: the members' declared uncompressed sizes together;
- :data:`MAX_RATIO`: one member's uncompressed size over its compressed size, for members
  larger than :data:`RATIO_FLOOR_BYTES` (tiny members compress very well and are harmless);
  ordinary Office XML compresses 5-30 times, a bomb hundreds or thousands of times;
- :data:`MAX_MEMBERS`: the number of members.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from kg_platform.errors import CorruptDocument

__all__ = [
    "MAX_MEMBERS",
    "MAX_RATIO",
    "MAX_UNCOMPRESSED_BYTES",
    "RATIO_FLOOR_BYTES",
    "check_container",
]

#: the members' declared uncompressed bytes together
MAX_UNCOMPRESSED_BYTES = 200_000_000
#: one member's uncompressed size over its compressed size (above RATIO_FLOOR_BYTES)
MAX_RATIO = 100.0
#: members this small are never judged by their ratio
RATIO_FLOOR_BYTES = 1_000_000
#: members of one container
MAX_MEMBERS = 10_000

_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")


def _mb(n: int) -> str:
    return f"{n / 1_000_000:,.0f} MB" if n >= 1_000_000 else f"{n:,} bytes"


def check_container(path: Path | str) -> None:
    """Refuse ``path`` as corrupt when it is a zip container over the limits; any other file
    (not a zip, or a damaged zip, which its parser reports) passes unread beyond 4 bytes."""
    path = Path(path)
    try:
        with path.open("rb") as fh:
            if fh.read(4) not in _ZIP_MAGIC:
                return
        with zipfile.ZipFile(path) as zf:
            members = zf.infolist()
    except (OSError, zipfile.BadZipFile, ValueError):
        return  # the parser opens it and says what is wrong
    hint = "the file is a decompression bomb or damaged; re-export it from its application"
    if len(members) > MAX_MEMBERS:
        raise CorruptDocument(
            f"{path}: the container holds {len(members):,} members, over {MAX_MEMBERS:,}",
            hint=hint,
        )
    total = 0
    for info in members:
        total += info.file_size
        if info.file_size > RATIO_FLOOR_BYTES:
            ratio = info.file_size / max(info.compress_size, 1)
            if ratio > MAX_RATIO:
                raise CorruptDocument(
                    f"{path}: declares {_mb(info.file_size)} uncompressed in {info.filename} "
                    f"({_mb(info.compress_size)} compressed, {ratio:,.0f} times; the limit is "
                    f"{MAX_RATIO:,.0f})",
                    hint=hint,
                )
    if total > MAX_UNCOMPRESSED_BYTES:
        raise CorruptDocument(
            f"{path}: declares {_mb(total)} uncompressed in {len(members)} members, over the "
            f"{_mb(MAX_UNCOMPRESSED_BYTES)} limit",
            hint=hint,
        )
