"""Builds the section tree from a flat stream of headings and blocks, for every format.

Parsers see a document as a sequence: "heading of level L", "block", "block", "heading"... The
builder turns that into the :class:`~kg_platform.parsing.model.Section` tree (a heading closes
every open section of the same or deeper level; skipped levels such as H1 -> H3 nest directly)
and, at the end, assigns each block its character offset in :meth:`ParsedDocument.text`, so the
offsets always agree with the text the segmenter will cut.
"""

from __future__ import annotations

from kg_platform.parsing.model import Block, BlockKind, Section

BLOCK_SEPARATOR = "\n\n"  # must match ParsedDocument.text()


class TreeBuilder:
    """Accumulates headings and blocks in document order."""

    def __init__(self) -> None:
        self.root = Section(title="", level=0)
        self._stack: list[Section] = [self.root]

    @property
    def current(self) -> Section:
        return self._stack[-1]

    def heading(self, title: str, level: int, page: int | None = None) -> Section:
        """Open a section of depth ``level`` (1 = top); deeper open sections are closed."""
        level = max(1, int(level))
        title = " ".join(title.split())
        while len(self._stack) > 1 and self._stack[-1].level >= level:
            self._stack.pop()
        section = Section(title=title, level=level, page=page)
        self._stack[-1].children.append(section)
        self._stack.append(section)
        return section

    def block(self, text: str, kind: BlockKind = "text", page: int | None = None) -> Block | None:
        """Append a block to the open section; blank text is ignored (returns None)."""
        if not text or not text.strip():
            return None
        blk = Block(text=text, kind=kind, page=page)
        self.current.blocks.append(blk)
        return blk

    def finish(self) -> Section:
        """Assign offsets and return the root section."""
        assign_offsets(self.root)
        return self.root


def assign_offsets(root: Section) -> None:
    """Set ``Block.offset`` to the block's start in ``ParsedDocument.text()``."""
    pos = 0
    first = True
    for section in root.walk():
        for blk in section.blocks:
            if not first:
                pos += len(BLOCK_SEPARATOR)
            blk.offset = pos
            pos += len(blk.text)
            first = False


def first_heading(root: Section) -> str | None:
    """Title of the first heading in document order (None when the document has none)."""
    for section in root.walk()[1:]:
        if section.title:
            return section.title
    return None


def count_blocks(root: Section) -> int:
    return sum(len(s.blocks) for s in root.walk())
