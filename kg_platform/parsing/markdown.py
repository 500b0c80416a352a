"""Markdown -> section tree. Also the back end for DOCX, PPTX, XLSX and HTML (via markitdown).

A small line scanner rather than a full CommonMark parser: what ingestion needs is the heading
tree (ATX ``#`` and setext underlines), tables kept whole as ``table`` blocks, fenced code kept
whole as ``code`` blocks, lists kept together as ``list`` blocks, paragraphs as ``text`` blocks,
stand-alone images as ``figure`` blocks (with a following "Figure N" caption merged in) and the
link targets. Anything it does not recognise stays in a paragraph, so no text is lost.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kg_platform.errors import EmptyDocument
from kg_platform.parsing._files import RawFile, check_text_like
from kg_platform.parsing._tree import TreeBuilder, count_blocks, first_heading
from kg_platform.parsing.model import Block, ParsedDocument, Section

MIME = "text/markdown"

_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT_1 = re.compile(r"^ {0,3}=+[ \t]*$")
_SETEXT_2 = re.compile(r"^ {0,3}-+[ \t]*$")
_THEMATIC = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_TABLE_DELIM = re.compile(r"^[ \t]*\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_LIST_ITEM = re.compile(r"^( {0,3})([-*+]|\d{1,9}[.)])([ \t]+|$)")
_IMAGE_ONLY = re.compile(r"^\s*(?:\[)?!\[([^\]]*)\]\(([^)]*)\)(?:\]\([^)]*\))?\s*$")
_ZERO_WIDTH = {0x200B: None, 0x200C: None, 0x200D: None, 0x2060: None, 0xFEFF: None}
_SLIDE = re.compile(r"^<!-- Slide number: (\d+) -->\s*$")  # markitdown's PPTX slide marker
_CAPTION = re.compile(r"^\s*(?:\*\*|\*|_)?(Figure|Fig\.?)\s*\d+", re.IGNORECASE)

# Links: [text](target "title") not preceded by "!", <scheme://...>, and [ref]: target
_INLINE_LINK = re.compile(
    r"(?<!!)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^\s)>]+)>?(?:\s+[\"'(][^)]*)?\)"
)
_IMAGE = re.compile(r"!\[([^\]]*)\]\((?:[^()]|\([^)]*\))*\)")
_AUTOLINK = re.compile(r"<((?:https?|ftp|mailto):[^>\s]+)>")
_REF_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+[\"'(].*)?$")


@dataclass
class MarkdownResult:
    root: Section
    links: list[str] = field(default_factory=list)
    front_matter: str | None = None


def is_blank(line: str) -> bool:
    return not line.strip()


def simplify_links(text: str) -> str:
    """Replace ``[text](url)`` by ``text`` and ``![alt](url)`` by ``alt`` (for converted docs)."""
    text = _IMAGE.sub(lambda m: m.group(1).strip(), text)
    return _INLINE_LINK.sub(lambda m: m.group(1), text)


def _clean_heading(title: str) -> str:
    title = simplify_links(title).translate(_ZERO_WIDTH)
    title = re.sub(r"(\*\*|__)(.+?)\1", r"\2", title)
    title = re.sub(r"(?<![\w*])([*_])(\S.*?)\1(?![\w*])", r"\2", title)
    return " ".join(title.split())


def _collect_links(text: str, out: list[str], seen: set[str]) -> None:
    for m in _INLINE_LINK.finditer(text):
        _add_link(m.group(2), out, seen)
    for m in _AUTOLINK.finditer(text):
        _add_link(m.group(1), out, seen)


def _add_link(target: str, out: list[str], seen: set[str]) -> None:
    target = target.strip()
    if (
        not target
        or target.startswith("#")
        or target.startswith("data:")
        or target.lower().startswith("javascript:")
    ):
        return
    if target not in seen:
        seen.add(target)
        out.append(target)


class _Scanner:
    """Walks the lines once, feeding a :class:`TreeBuilder`."""

    def __init__(self, builder: TreeBuilder, *, plain_links: bool) -> None:
        self.b = builder
        self.plain_links = plain_links
        self.links: list[str] = []
        self._seen: set[str] = set()
        self.para: list[str] = []
        self.page: int | None = None  # slide number for PPTX (markitdown marks each slide)

    # -- emitting -------------------------------------------------------------------------------
    def _emit(self, text: str, kind: str) -> Block | None:
        if kind != "code":
            _collect_links(text, self.links, self._seen)
            if self.plain_links:
                text = simplify_links(text)
        return self.b.block(text, kind, page=self.page)  # type: ignore[arg-type]

    def flush(self) -> None:
        if not self.para:
            return
        lines, self.para = self.para, []
        text = "\n".join(lines).strip("\n")
        image = _IMAGE_ONLY.match(text) if len(lines) == 1 else None
        if image:  # images are resources, not outgoing links: their targets are not collected
            alt = " ".join(image.group(1).split())
            self.b.block(alt or "[image]", "figure", page=self.page)
            return
        last = self.b.current.blocks[-1] if self.b.current.blocks else None
        if _CAPTION.match(text) and last is not None and last.kind == "figure" and len(text) < 600:
            caption = simplify_links(" ".join(text.split()))
            last.text = caption if last.text in ("", "[image]") else f"{caption}\n{last.text}"
            return
        self._emit(text, "text")

    # -- scanning ------------------------------------------------------------------------------
    def run(self, lines: list[str]) -> None:
        n = len(lines)
        i = 0
        while i < n:
            line = lines[i]
            fence = _FENCE.match(line)
            if fence and not (fence.group(2)[0] == "`" and "`" in fence.group(3)):
                self.flush()
                i = self._code(lines, i, fence)
                continue
            if is_blank(line):
                self.flush()
                i += 1
                continue
            slide = _SLIDE.match(line)
            if slide:
                self.flush()
                self.page = int(slide.group(1))
                i += 1
                continue
            atx = _ATX.match(line)
            if atx:
                self.flush()
                title = _clean_heading(atx.group(2) or "")
                if title:
                    self.b.heading(title, len(atx.group(1)), page=self.page)
                i += 1
                continue
            if self.para and _SETEXT_1.match(line):
                self._setext(1)
                i += 1
                continue
            if self.para and _SETEXT_2.match(line) and not _LIST_ITEM.match(self.para[0]):
                self._setext(2)
                i += 1
                continue
            if _THEMATIC.match(line):
                self.flush()
                i += 1
                continue
            if (
                "|" in line
                and i + 1 < n
                and _TABLE_DELIM.match(lines[i + 1])
                and "-" in lines[i + 1]
            ):
                self.flush()
                i = self._table(lines, i)
                continue
            item = _LIST_ITEM.match(line)
            if item and (
                not self.para or not item.group(2)[0].isdigit() or item.group(2)[:-1] == "1"
            ):
                self.flush()
                i = self._list(lines, i)
                continue
            self.para.append(line)
            i += 1
        self.flush()

    def _setext(self, level: int) -> None:
        title = _clean_heading(" ".join(self.para))
        self.para = []
        if title:
            self.b.heading(title, level, page=self.page)

    def _code(self, lines: list[str], i: int, fence: re.Match[str]) -> int:
        marker = fence.group(2)
        close = re.compile(
            r"^ {0,3}" + re.escape(marker[0]) + "{" + str(len(marker)) + r",}[ \t]*$"
        )
        body = [lines[i]]
        j = i + 1
        while j < len(lines):
            body.append(lines[j])
            if close.match(lines[j]):
                j += 1
                break
            j += 1
        else:
            body.append(marker)  # unterminated fence: CommonMark runs it to the end; close it
        self.b.block("\n".join(body), "code", page=self.page)
        return j

    def _table(self, lines: list[str], i: int) -> int:
        j = i
        rows = []
        while j < len(lines) and not is_blank(lines[j]) and "|" in lines[j]:
            rows.append(lines[j].rstrip())
            j += 1
        self._emit("\n".join(rows), "table")
        return j

    def _list(self, lines: list[str], i: int) -> int:
        n = len(lines)
        body = [lines[i]]
        j = i + 1
        in_fence: str | None = None  # marker of a fenced block nested in an item
        while j < n:
            line = lines[j]
            fence = _FENCE.match(line) if line[:1].isspace() else None
            if in_fence is not None:
                body.append(line)
                if line.strip().startswith(in_fence) and not line.strip().strip(in_fence[0]):
                    in_fence = None
                j += 1
                continue
            if fence:
                in_fence = fence.group(2)
                body.append(line)
                j += 1
                continue
            if is_blank(line):
                k = j
                while k < n and is_blank(lines[k]):
                    k += 1
                if k < n and (_LIST_ITEM.match(lines[k]) or lines[k][:1] in (" ", "\t")):
                    body.extend(lines[j:k])
                    j = k
                    continue
                break
            if _ATX.match(line) or _THEMATIC.match(line) and not _LIST_ITEM.match(line):
                break
            if _FENCE.match(line) and not line[:1].isspace():
                break
            body.append(line)
            j += 1
        self._emit("\n".join(body).rstrip(), "list")
        return j


def _split_front_matter(text: str) -> tuple[str | None, str]:
    if not text.startswith("---\n") and not text.startswith("---\r\n"):
        return None, text
    end = re.search(r"^(---|\.\.\.)[ \t]*$", text[4:], re.MULTILINE)
    if not end:
        return None, text
    return text[4 : 4 + end.start()], text[4 + end.end() :]


def build_markdown(
    text: str, builder: TreeBuilder | None = None, *, plain_links: bool = False
) -> MarkdownResult:
    """Scan Markdown ``text`` into ``builder`` (a fresh one by default) and return the tree.

    ``plain_links`` keeps only the anchor text of links and the alt text of images in block
    text (the targets are still collected); converters use it so chunks read like prose.
    """
    builder = builder or TreeBuilder()
    front, body = _split_front_matter(text.lstrip("\ufeff"))
    scanner = _Scanner(builder, plain_links=plain_links)
    lines = body.splitlines()
    for line in lines:  # reference-style link definitions anywhere in the document
        ref = _REF_DEF.match(line)
        if ref:
            _add_link(ref.group(1), scanner.links, scanner._seen)
    scanner.run(lines)
    return MarkdownResult(root=builder.finish(), links=scanner.links, front_matter=front)


def document_from_markdown(
    text: str,
    *,
    raw: RawFile,
    mime: str,
    title: str | None = None,
    plain_links: bool = False,
    links: list[str] | None = None,
    warnings: list[str] | None = None,
    metadata: dict[str, str] | None = None,
) -> ParsedDocument:
    """Wrap :func:`build_markdown` output into a :class:`ParsedDocument` for ``raw``."""
    result = build_markdown(text, plain_links=plain_links)
    if count_blocks(result.root) == 0 and len(result.root.walk()) == 1:
        raise EmptyDocument(
            f"{raw.path}: no text could be extracted",
            hint="the document has no text content; remove it from the input",
        )
    all_links = list(links or [])
    seen = set(all_links)
    for link in result.links:
        if link not in seen:
            seen.add(link)
            all_links.append(link)
    meta = dict(metadata or {})
    if result.front_matter is not None:
        meta["front_matter"] = result.front_matter
    return ParsedDocument(
        uri=raw.uri,
        title=(title or "").strip() or first_heading(result.root) or raw.path.stem,
        mime=mime,
        root=result.root,
        sha256=raw.sha256,
        bytes=raw.size,
        links=all_links,
        warnings=list(warnings or []),
        metadata=meta,
    )


def parse_markdown(raw: RawFile) -> ParsedDocument:
    """Parse a ``.md`` file: decode it (reporting invalid bytes) and build the tree."""
    from kg_platform.parsing.text import decode_small

    check_text_like(raw, "Markdown")
    text, warnings = decode_small(raw)
    if not text.strip():
        raise EmptyDocument(
            f"{raw.path}: the file holds only whitespace",
            hint="remove it from the input or add content",
        )
    return document_from_markdown(text, raw=raw, mime=MIME, warnings=warnings)


__all__ = [
    "MarkdownResult",
    "build_markdown",
    "document_from_markdown",
    "parse_markdown",
    "simplify_links",
]
