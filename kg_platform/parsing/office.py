"""DOCX, PPTX and XLSX through markitdown, then the Markdown parser builds the tree.

markitdown (MIT) converts Office Open XML files offline into Markdown that keeps headings, lists
and tables, in well under a second per document; we chose it over
``unstructured``, which downloads a spaCy model on first use and so fails offline. Doing Office formats as
"convert to Markdown, then one Markdown parser" keeps one section-tree builder for all of them.
PPTX slides keep their number as the block's ``page``; XLSX sheets become sections.
"""

from __future__ import annotations

import re
import zipfile
from functools import lru_cache
from typing import Any

from kg_platform.errors import CorruptDocument, EncryptedDocument, UnsupportedFormat
from kg_platform.parsing._files import RawFile
from kg_platform.parsing.markdown import document_from_markdown
from kg_platform.parsing.model import ParsedDocument
from kg_platform.parsing.slides import pptx_markdown
from kg_platform.parsing.word import docx_markdown

MIMES = {
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
}
_CONVERTER = {".docx": "mammoth", ".pptx": "python-pptx", ".xlsx": "markitdown"}
# the part every valid package of that kind contains
_MAIN_PART = {".docx": "word/", ".pptx": "ppt/", ".xlsx": "xl/"}
_OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ENCRYPTION_INFO = "EncryptionInfo".encode("utf-16-le")
_CORE_TITLE = re.compile(rb"<dc:title>(.*?)</dc:title>", re.DOTALL)


@lru_cache(maxsize=1)
def markitdown() -> Any:
    """One MarkItDown instance (plugins off: nothing may reach the network)."""
    try:
        from markitdown import MarkItDown
    except ImportError as exc:  # pragma: no cover - core dependency
        raise UnsupportedFormat(
            "markitdown is not installed", hint="pip install 'markitdown[docx,pptx,xlsx]'"
        ) from exc
    return MarkItDown(enable_plugins=False)


def _check_package(raw: RawFile, ext: str) -> str | None:
    """Verify the file is the OOXML package its extension says; return its core title."""
    if raw.head.startswith(_OLE):
        if _ENCRYPTION_INFO in raw.path.read_bytes():
            raise EncryptedDocument(
                f"{raw.path}: the {ext} file is password protected",
                hint="remove the password (save an unprotected copy) and retry",
            )
        raise CorruptDocument(
            f"{raw.path}: is a legacy binary Office file, not {ext}",
            hint=f"open it in Office/LibreOffice and save it as {ext}",
        )
    if not raw.head.startswith(b"PK"):
        raise CorruptDocument(
            f"{raw.path}: not a {ext} file (no ZIP container)",
            hint="the file is damaged or misnamed; re-export it",
        )
    try:
        with zipfile.ZipFile(raw.path) as zf:
            names = zf.namelist()
            if not any(n.startswith(_MAIN_PART[ext]) for n in names):
                raise CorruptDocument(
                    f"{raw.path}: ZIP file without the {ext} main part",
                    hint="the file is damaged or misnamed; re-export it",
                )
            if "docProps/core.xml" in names:
                m = _CORE_TITLE.search(zf.read("docProps/core.xml"))
                if m:
                    return m.group(1).decode("utf-8", "replace").strip() or None
    except zipfile.BadZipFile as exc:
        raise CorruptDocument(
            f"{raw.path}: damaged {ext} package ({exc})",
            hint="the file is truncated or damaged; re-export it",
        ) from None
    return None


def parse_office(raw: RawFile, ext: str) -> ParsedDocument:
    """Parse a .docx, .pptx or .xlsx file."""
    core_title = _check_package(raw, ext)
    warnings: list[str] = []
    converted_title = None
    if ext == ".docx":
        text = docx_markdown(raw.path, warnings)
    elif ext == ".pptx":
        text = pptx_markdown(raw.path, warnings)
    else:
        try:
            result = markitdown().convert(str(raw.path))
        except Exception as exc:  # noqa: BLE001 - markitdown wraps failures in its own types
            raise CorruptDocument(
                f"{raw.path}: could not convert the {ext} file ({exc})",
                hint="open and re-save it in Office/LibreOffice, then retry",
            ) from None
        text = result.text_content or ""
        converted_title = getattr(result, "title", None)
    # plain_links: chunk text keeps the anchor text only; the targets still go to doc.links
    doc = document_from_markdown(
        text,
        raw=raw,
        mime=MIMES[ext],
        title=core_title or converted_title,
        plain_links=True,
        warnings=warnings,
        metadata={"converter": _CONVERTER[ext]},
    )
    if ext == ".pptx":  # slides are the pages of a presentation
        slides = [b.page for s in doc.sections() for b in s.blocks if b.page is not None]
        doc.pages = max(slides) if slides else None
    return doc


__all__ = ["MIMES", "parse_office"]
