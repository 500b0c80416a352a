"""The typed document model every parser produces, whatever the format.

A :class:`ParsedDocument` is a tree of :class:`Section`\\ s holding :class:`Block`\\ s in reading
order. Blocks keep provenance (page number for paged formats, character offset in the extracted
text) so a chunk can cite "page 3 of report.pdf". Tables are blocks of kind ``table`` whose text is
Markdown; figures are blocks of kind ``figure`` whose text is the caption.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

BlockKind = Literal["text", "table", "figure", "code", "list"]


@dataclass
class Block:
    text: str
    kind: BlockKind = "text"
    page: int | None = None  # 1-based page number (PDF); None for unpaged formats
    offset: int | None = None  # character offset in the document's extracted text


@dataclass
class Section:
    title: str
    level: int  # heading depth: 0 = document root, 1 = H1/top section ...
    blocks: list[Block] = field(default_factory=list)
    children: list["Section"] = field(default_factory=list)
    page: int | None = None  # page where the section starts

    def walk(self) -> "list[Section]":
        """This section and all descendants, depth-first in document order."""
        out = [self]
        for child in self.children:
            out.extend(child.walk())
        return out


@dataclass
class ParsedDocument:
    uri: str  # absolute path or URL the document came from
    title: str
    mime: str
    root: Section  # level-0 section; its blocks precede the first heading
    sha256: str = ""
    bytes: int = 0
    pages: int | None = None
    links: list[str] = field(default_factory=list)  # outgoing links/citations (URLs, paths)
    warnings: list[str] = field(default_factory=list)  # e.g. invalid bytes replaced, with counts
    metadata: dict[str, str] = field(default_factory=dict)

    def sections(self) -> list[Section]:
        return self.root.walk()

    def text(self) -> str:
        return "\n\n".join(b.text for s in self.sections() for b in s.blocks)
