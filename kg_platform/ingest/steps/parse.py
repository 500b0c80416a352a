"""Step 2, parse: a file read by its parser (:func:`~kg_platform.ingest.files.read_document`)
flattened into a :class:`SourceInput`, the plan step's input (sections of sentence segments).

The lab's QA feeder builds :class:`SourceInput` rows itself (one per paragraph) and joins here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kg_platform.ingest.files import Candidate, Parser, read_document
from kg_platform.parsing.model import ParsedDocument
from kg_platform.segmenting.paragraphs import STRUCTURED, Segment
from kg_platform.segmenting.sentences import split_sentences

__all__ = [
    "Candidate",
    "Parser",
    "SectionInput",
    "Segment",
    "SourceInput",
    "document_input",
    "read_document",
]


@dataclass
class SectionInput:
    title: str
    level: int
    path: str
    parent: int | None  # index of the parent SectionInput; None = child of the source
    segments: list[Segment] = field(default_factory=list)
    page: int | None = None


@dataclass
class SourceInput:
    corpus: str
    uri: str
    title: str
    mime: str
    sha256: str
    bytes: int
    sections: list[SectionInput]
    pages: int | None = None
    links: list[str] = field(default_factory=list)
    pipeline: str = ""


def document_input(doc: ParsedDocument, corpus: str, pipeline: str) -> SourceInput:
    """Flatten a parser's section tree into :class:`SectionInput` rows, splitting sentences."""
    sections: list[SectionInput] = []

    def visit(sec: Any, parent: int | None, path: list[str]) -> None:
        title = (sec.title or "").strip()
        here = path + [title] if title else path
        index = len(sections)
        item = SectionInput(
            title=title or (doc.title if sec.level == 0 else ""),
            level=sec.level,
            path=" > ".join(here) or doc.title,
            parent=parent,
            page=sec.page,
        )
        for block in sec.blocks:
            text = (block.text or "").strip()
            if not text:
                continue
            if block.kind in STRUCTURED:
                lines = (
                    [ln for ln in text.splitlines() if ln.strip()]
                    if block.kind == "table"
                    else split_sentences(text)
                )
                item.segments.append(Segment(block.kind, lines or [text], block.page))
            elif block.kind == "code":
                lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
                item.segments.append(Segment("text", lines, block.page))
            else:
                item.segments.append(Segment("text", split_sentences(text), block.page))
        sections.append(item)
        for child in sec.children:
            visit(child, index, here)

    visit(doc.root, None, [])
    return SourceInput(
        corpus=corpus,
        uri=doc.uri,
        title=doc.title or doc.uri,
        mime=doc.mime,
        sha256=doc.sha256,
        bytes=doc.bytes,
        sections=sections,
        pages=doc.pages,
        links=list(doc.links),
        pipeline=pipeline,
    )
