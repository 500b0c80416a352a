"""E-mail (``.eml``, RFC 5322/MIME) with Python's ``email`` package.

The subject is the title; the body is the ``text/plain`` part (paragraphs as blocks) or, when a
message has only HTML, the ``text/html`` part through the HTML parser. Sender, recipients, date
and attachment names go to ``metadata``; URLs in the body become links.
"""

from __future__ import annotations

import email
import re
from email import policy
from email.message import EmailMessage

from kg_platform.errors import CorruptDocument, EmptyDocument
from kg_platform.parsing._files import RawFile, check_text_like
from kg_platform.parsing._tree import TreeBuilder
from kg_platform.parsing.model import ParsedDocument
from kg_platform.parsing.text import split_paragraphs

MIME = "message/rfc822"
_URL = re.compile(r"https?://[^\s<>\"')\]]+")


def parse_eml(raw: RawFile) -> ParsedDocument:
    check_text_like(raw, "e-mail")
    with open(raw.path, "rb") as fh:
        msg = email.message_from_binary_file(fh, policy=policy.default)
    assert isinstance(msg, EmailMessage)
    if not any(k.lower() in ("from", "subject", "date", "to", "message-id") for k in msg.keys()):
        raise CorruptDocument(
            f"{raw.path}: has an .eml extension but no e-mail headers",
            hint="export the message again as .eml (RFC 822) or rename the file",
        )
    subject = " ".join(str(msg.get("subject", "") or "").split())
    metadata = {
        k: " ".join(str(msg.get(k)).split()) for k in ("from", "to", "cc", "date") if msg.get(k)
    }
    attachments = [p.get_filename() for p in msg.iter_attachments() if p.get_filename()]
    if attachments:
        metadata["attachments"] = ", ".join(str(a) for a in attachments)
    warnings: list[str] = []
    body = msg.get_body(preferencelist=("plain", "html"))
    if body is None:
        raise EmptyDocument(
            f"{raw.path}: the message has no text or HTML body",
            hint="nothing to ingest; attachments are not parsed from e-mail",
        )
    try:
        content = body.get_content()
    except (LookupError, UnicodeError) as exc:
        payload = body.get_payload(decode=True)
        raw_bytes = payload if isinstance(payload, bytes) else b""
        content = raw_bytes.decode("utf-8", "replace")
        warnings.append(
            f"body charset could not be used ({exc}); decoded as UTF-8 with "
            f"{content.count(chr(0xFFFD))} replacement character(s)"
        )
    if body.get_content_type() == "text/html":
        from kg_platform.parsing.html import html_to_document

        return html_to_document(
            content, raw=raw, mime=MIME, title=subject or None, warnings=warnings, metadata=metadata
        )
    builder = TreeBuilder()
    links: list[str] = []
    for para in split_paragraphs(str(content)):
        builder.block(para, "text")
        for url in _URL.findall(para):
            url = url.rstrip(".,;:")
            if url not in links:
                links.append(url)
    root = builder.finish()
    if not root.blocks:
        raise EmptyDocument(
            f"{raw.path}: the message body is empty", hint="nothing to ingest from this message"
        )
    return ParsedDocument(
        uri=raw.uri,
        title=subject or raw.path.stem,
        mime=MIME,
        root=root,
        sha256=raw.sha256,
        bytes=raw.size,
        links=links,
        warnings=warnings,
        metadata=metadata,
    )


__all__ = ["parse_eml"]
