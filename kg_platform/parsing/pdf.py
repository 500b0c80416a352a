"""PDF with PyMuPDF (optional extra ``pdf``: PyMuPDF is AGPL, the platform Apache-2.0).

Per page: text blocks with their fonts (``get_text("dict")``), ruled tables (``find_tables``
with its classic line strategy; rendered to Markdown and their area removed from the text),
figure captions ("Figure N" / "Fig. N" lines, with the labels printed inside the figure), and link
URIs. Then, over the whole document: running heads/footers and page numbers are dropped, blocks
are put in reading order (column by column, between full-width blocks, so two- and three-column
pages read down each column), and headings come from the outline (``get_toc``) or, when there is
none, from font size, weight and section numbering relative to the body text (a bold or italic
first line is split from its paragraph as a run-in heading; three same-styled candidates in a row
are a list or a cover page, not headings). Ligatures are expanded and words broken at a line end
are joined (with their hyphen when the document writes them so elsewhere). A ruled table keeps
one row per visual row. Every block carries its page number.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from typing import Any

from kg_platform.errors import (
    CorruptDocument,
    EmptyDocument,
    EncryptedDocument,
    NeedsOCR,
    UnsupportedFormat,
)
from kg_platform.parsing._files import RawFile
from kg_platform.parsing._tree import TreeBuilder
from kg_platform.parsing.model import ParsedDocument
from kg_platform.parsing.pdf_layout import (
    _LETTERS,
    _RTL_LETTER,
    _WS,
    _drop_running_heads,
    _font_headings,
    _inside,
    _Item,
    _Page,
    _reading_order,
    _toc_headings,
    _union,
    clean_text,
    is_rtl,
    rtl_line_text,
)
from kg_platform.parsing.pdf_tables import (
    _has_grid,
    _table_markdown,
    _table_options,
    aligned_tables,
    drop_lines_inside,
    leader_tables,
)

MIME = "application/pdf"
TAIL_BYTES = 4096  # a complete PDF ends with %%EOF within its last bytes

_CAPTION = re.compile(r"^\s*(Figure|Fig\.?)\s*\d+[\w.\-–]*", re.IGNORECASE)
# "Figure 3." / "Fig. 2:" / "Figure 7-26.": a number then punctuation ("Figure 3 shows" is prose)
_CAPTION_STRICT = re.compile(
    r"^\s*(Figure|Fig\.?)\s*\d+(?:[.\-–]\d+)*[a-z]?\s*[.:|—–-]", re.IGNORECASE
)
_BULLET = re.compile(r"^\s*([•◦▪●‣∙·\-–*]|\(?\d{1,3}[.)]|\(?[a-z][.)])\s+")


@lru_cache(maxsize=1)
def _pymupdf() -> Any:
    try:
        import pymupdf
    except ImportError as exc:
        raise UnsupportedFormat(
            "PDF support needs PyMuPDF, which is not installed",
            hint="pip install -e '.[pdf]' in the kg-platform repository",
        ) from exc
    return pymupdf


def _join_lines(lines: list[str]) -> str:
    """Lines of a paragraph joined; a word broken at a line-end hyphen is joined with a soft
    hyphen mark, which :func:`_resolve_hyphens` turns into "-" or nothing for the document."""
    out = ""
    for line in lines:
        if not out:
            out = line
        elif out.endswith("-") and line[:1].islower() and out[-2:-1].isalpha():
            out = out[:-1] + SOFT_HYPHEN + line  # "appoint-" + "ments", "self-" + "locking"
        else:
            out += " " + line
    return out


SOFT_HYPHEN = "\u00ad"
_BROKEN = re.compile(r"(\w+)\u00ad(\w+)")
# the second half of a word hyphenated by the typesetter, when the document cannot tell
_SUFFIXES = re.compile(
    r"^(ments?|tions?|sions?|ness(es)?|it(y|ies)|ances?|ences?|ous(ly)?|ively|ically|ations?"
    r"|izations?|ally|ing(ly)?|ed|ers?|able|ible|ers?|ure[sd]?|ial(ly)?|ive|ists?|ism)$"
)


def _resolve_hyphens(pages: list[_Page]) -> None:
    """Each line-end break becomes "a-b" where the document writes "a-b" elsewhere, "ab" where
    it writes "ab" elsewhere, else "ab" when "b" is a word ending ("appoint-ments"), else
    "a-b" (a compound such as "self-locking")."""
    texts = [it.text for page in pages for it in page.items]
    if not any(SOFT_HYPHEN in t for t in texts):
        return
    whole = " ".join(texts).lower()
    words = Counter(re.findall(r"\w+(?:-\w+)*", whole))

    def pick(m: re.Match[str]) -> str:
        a, b = m.group(1), m.group(2)
        if words[f"{a}-{b}".lower()]:
            return f"{a}-{b}"
        if words[(a + b).lower()] or _SUFFIXES.match(b.lower()):
            return a + b
        return f"{a}-{b}"

    for page in pages:
        for it in page.items:
            if SOFT_HYPHEN in it.text:
                it.text = _BROKEN.sub(pick, it.text).replace(SOFT_HYPHEN, "-")


def _is_bold(span: dict[str, Any]) -> bool:
    return bool(span["flags"] & 16) or "bold" in span["font"].lower()


def _is_heavy(span: dict[str, Any]) -> bool:
    font = span["font"].lower()
    return _is_bold(span) or any(w in font for w in ("medium", "semibold", "demi", "heavy"))


def _styled(line: dict[str, Any]) -> bool:
    spans = [s for s in line["spans"] if s["text"].strip()]
    return bool(spans) and all(_is_bold(s) or s["flags"] & 2 for s in spans)  # 2: italic


def _split_run_in(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A paragraph whose first line alone is bold or italic (a run-in heading set on its own
    line, "Boots Self-Locking Nut" then the text) becomes two blocks: that line, then the rest."""
    out: list[dict[str, Any]] = []
    for block in blocks:
        lines = [ln for ln in block.get("lines", ()) if any(s["text"].strip() for s in ln["spans"])]
        if block.get("type") == 0 and len(lines) >= 2 and _styled(lines[0]):
            head = _WS.sub(" ", _line_text(lines[0])).strip()
            if (
                not _styled(lines[1])
                and len(head.split()) <= 12
                and head[-1:] not in ".,;:"
                and _LETTERS.search(head)
                and not _CAPTION.match(head)
            ):
                rest = lines[1:]
                bbox = tuple(rest[0]["bbox"])
                for ln in rest[1:]:
                    bbox = _union(bbox, tuple(ln["bbox"]))
                out.append({"type": 0, "bbox": lines[0]["bbox"], "lines": [lines[0]], "run_in": 1})
                out.append({"type": 0, "bbox": bbox, "lines": rest})
                continue
        out.append(block)
    return out


def _line_text(line: dict[str, Any]) -> str:
    """A text line's characters: in logical order when :func:`_order_rtl_lines` found them."""
    rtl = line.get("rtl_text")
    return rtl if rtl is not None else "".join(s["text"] for s in line["spans"])


def _order_rtl_lines(page: Any, blocks: list[dict[str, Any]], flags: int) -> None:
    """Give each right-to-left line of ``blocks`` its text in logical order (``rtl_text``), read
    from the characters' positions (:func:`~kg_platform.parsing.pdf_layout.rtl_line_text`).
    Pages without Hebrew or Arabic script are not read a second time."""
    if not any(
        _RTL_LETTER.search(s["text"])
        for b in blocks
        for ln in b.get("lines", ())
        for s in ln["spans"]
    ):
        return
    raw = page.get_text("rawdict", flags=flags)["blocks"]
    if len(raw) != len(blocks):
        return  # not the same segmentation: keep the stream order rather than guess
    for block, raw_block in zip(blocks, raw):
        lines, raw_lines = block.get("lines", ()), raw_block.get("lines", ())
        if len(lines) != len(raw_lines):
            continue
        for line, raw_line in zip(lines, raw_lines):
            text = "".join(s["text"] for s in line["spans"])
            chars = [c for s in raw_line["spans"] for c in s["chars"]]
            if is_rtl(text.split()) and "".join(c["c"] for c in chars) == text:
                line["rtl_text"] = rtl_line_text(chars)


# -- one page ----------------------------------------------------------------------------------
def _read_page(page: Any, number: int) -> _Page:
    fitz = _pymupdf()
    rect = page.rect
    page_area = max(rect.width * rect.height, 1.0)
    # Text and image positions come in unrotated page space; tables and reading order use the
    # page as displayed, so rotated (landscape) pages are mapped through the rotation matrix.
    matrix = page.rotation_matrix if page.rotation else None

    def box(b: Any) -> tuple[float, float, float, float]:
        if matrix is None:
            return tuple(b)  # type: ignore[return-value]
        return tuple(fitz.Rect(b) * matrix)  # type: ignore[return-value]

    image_boxes = [box(info["bbox"]) for info in page.get_image_info()]
    image_boxes = [b for b in image_boxes if (b[2] - b[0]) * (b[3] - b[1]) > 0.005 * page_area]

    items: list[_Item] = []
    table_boxes: list[tuple[float, float, float, float]] = []
    if _has_grid(page):
        found = page.find_tables(**_table_options(fitz))
        if found.tables:
            words = [(*box(w[:4]), *w[4:]) for w in page.get_text("words")]
            for table in found.tables:
                md = _table_markdown(table, words)
                if md:
                    tbox = tuple(table.bbox)
                    table_boxes.append(tbox)  # type: ignore[arg-type]
                    items.append(_Item("table", md, tbox, number))  # type: ignore[arg-type]

    flags = fitz.TEXTFLAGS_DICT & ~fitz.TEXT_PRESERVE_IMAGES
    labels: list[_Item] = []
    blocks = page.get_text("dict", flags=flags)["blocks"]
    _order_rtl_lines(page, blocks, flags)
    sizes: Counter[float] = Counter()
    for block in blocks:
        for line in block.get("lines", ()):
            for span in line["spans"]:
                sizes[round(span["size"] * 2) / 2] += len(span["text"].strip())
    leaders, blocks = leader_tables(blocks, box)
    words = [(*box(w[:4]), *w[4:]) for w in page.get_text("words")]
    code = [  # a code listing (monospace, or aligned with runs of spaces) is not a table
        box(span["bbox"])
        for block in blocks
        for line in block.get("lines", ())
        for span in line["spans"]
        if span["flags"] & 8
        or any(m in span["font"].lower() for m in ("mono", "courier"))
        or "   " in span["text"].strip()  # columns made of runs of spaces
    ]
    aligned = aligned_tables(words, table_boxes + [t for _, t in leaders] + code)
    blocks = drop_lines_inside(blocks, [t for _, t in aligned], box)
    for md, tbox in leaders + aligned:
        items.append(_Item("table", md, tbox, number))
    for block in _split_run_in(blocks):
        if block.get("type") != 0:
            continue
        bbox = box(block["bbox"])
        cx, cy = (bbox[0] + bbox[2]) / 2, (bbox[1] + bbox[3]) / 2
        if any(_inside(cx, cy, t) for t in table_boxes):
            continue
        spans = [s for line in block["lines"] for s in line["spans"] if s["text"].strip()]
        if not spans:
            continue
        lines = [clean_text(_WS.sub(" ", _line_text(line)).strip()) for line in block["lines"]]
        lines = [ln for ln in lines if ln]
        text = _join_lines(lines)
        chars: Counter[float] = Counter()
        for s in spans:
            chars[round(s["size"] * 2) / 2] += len(s["text"].strip())
        size = chars.most_common(1)[0][0]
        lead = round(spans[0]["size"] * 2) / 2
        bold = all(_is_bold(s) for s in spans)
        heavy = all(_is_heavy(s) for s in spans)
        if len(text) <= 600 and (
            _CAPTION_STRICT.match(text)
            or (_CAPTION.match(text) and image_boxes and len(lines) <= 3)
        ):
            items.extend(_split_captions(block, number, box))
            continue
        kind = "list" if _BULLET.match(text) else "text"
        item = _Item(
            kind,
            text,
            bbox,
            number,
            size=size,
            lead=lead,  # type: ignore[arg-type]
            bold=bold,
            heavy=heavy,
            run_in=bool(block.get("run_in")),
            lines=len(lines),
        )
        if len(text.split()) <= 12 and any(_inside(cx, cy, b, pad=0) for b in image_boxes):
            labels.append(item)  # text printed inside a figure (callouts, legends)
        else:
            items.append(item)

    figures = [it for it in items if it.kind == "figure"]
    for label in labels:
        if figures:
            nearest = min(figures, key=lambda f: abs(f.cx - label.cx) + abs(f.cy - label.cy))
            nearest.labels.append(label.text)
        else:
            items.append(label)
    return _Page(number, rect.width, rect.height, items, len(image_boxes), sizes)


def _split_captions(block: dict[str, Any], number: int, box: Any) -> list[_Item]:
    """One figure item per "Figure N" in the block (captions of side-by-side figures share one)."""
    out: list[_Item] = []
    for line in block["lines"]:
        for span in line["spans"]:
            text = span["text"]
            if not text.strip():
                if out:
                    out[-1].text += " "
                continue
            if _CAPTION.match(text) or not out:
                out.append(_Item("figure", text, box(span["bbox"]), number))
            else:
                out[-1].text += text
                out[-1].bbox = _union(out[-1].bbox, box(span["bbox"]))
        if out:
            out[-1].text += " "
    for it in out:
        it.text = clean_text(_WS.sub(" ", it.text).strip())
    return [it for it in out if it.text]


def _check_container(raw: RawFile) -> None:
    if b"%PDF-" not in raw.head[:1024]:
        raise CorruptDocument(
            f"{raw.path}: not a PDF (no %PDF header)",
            hint="the file is misnamed or damaged; rename or re-export it",
        )
    with open(raw.path, "rb") as fh:
        fh.seek(max(0, raw.size - TAIL_BYTES))
        tail = fh.read()
    if b"%%EOF" not in tail:
        raise CorruptDocument(
            f"{raw.path}: the PDF is truncated (no %%EOF at its end)",
            hint="the download or copy was cut short; fetch the file again",
        )


def parse_pdf(raw: RawFile) -> ParsedDocument:
    """Parse a PDF into sections of text, list, table and figure blocks with page numbers."""
    fitz = _pymupdf()
    _check_container(raw)
    try:
        doc = fitz.open(raw.path)
    except Exception as exc:  # noqa: BLE001 - PyMuPDF raises several untyped errors on bad files
        raise CorruptDocument(
            f"{raw.path}: PyMuPDF cannot open the PDF ({exc})",
            hint="the file is damaged; re-export or re-download it",
        ) from None
    warnings: list[str] = []
    with doc:
        if doc.needs_pass:
            raise EncryptedDocument(
                f"{raw.path}: the PDF is password protected",
                hint="save an unprotected copy (or decrypt it with qpdf --decrypt) and ingest that",
            )
        if doc.is_encrypted:
            warnings.append("PDF has owner-password restrictions; text was extracted anyway")
        if doc.page_count == 0:
            raise CorruptDocument(
                f"{raw.path}: the PDF has no pages", hint="the file is damaged; re-export it"
            )
        pages: list[_Page] = []
        links: list[str] = []
        try:
            for page in doc:
                pages.append(_read_page(page, page.number + 1))
                for link in page.get_links():
                    uri = link.get("uri")
                    if uri and uri not in links:
                        links.append(uri)
            toc = doc.get_toc(simple=True)
        except (RuntimeError, fitz.mupdf.FzErrorBase) as exc:  # MuPDF: damaged content
            raise CorruptDocument(
                f"{raw.path}: damaged PDF content ({exc})",
                hint="re-export the PDF or print it to a new PDF",
            ) from None
        metadata = {
            k: str(v)
            for k, v in (doc.metadata or {}).items()
            if v and k in ("title", "author", "subject", "creator", "producer")
        }
        meta_title = (doc.metadata or {}).get("title") or ""
        page_count = doc.page_count

    if not any(it.text.strip() for p in pages for it in p.items):
        if any(p.images for p in pages):
            raise NeedsOCR(
                f"{raw.path}: the PDF has images but no text layer (scanned?)",
                hint="OCR is not enabled in kg-platform; run OCR first (e.g. "
                "ocrmypdf in.pdf out.pdf) and ingest the result",
            )
        raise EmptyDocument(f"{raw.path}: the PDF has no text", hint="nothing to ingest")

    _resolve_hyphens(pages)
    removed = _drop_running_heads(pages)
    if removed:
        metadata["running_heads_removed"] = str(removed)
    for page in pages:
        page.items = _reading_order(page.items)
    if toc:
        _toc_headings(pages, toc)
        metadata["headings_from"] = "outline"
    else:
        _font_headings(pages)
        metadata["headings_from"] = "fonts"

    builder = TreeBuilder()
    first_heading: str | None = None
    for page in pages:
        for it in page.items:
            if it.kind == "heading":
                builder.heading(it.text, it.level, page=it.page)
                first_heading = first_heading or it.text
            elif it.kind == "figure":
                text = it.text
                if it.labels:
                    text += "\n(labels in the figure: " + "; ".join(it.labels) + ")"
                builder.block(text, "figure", page=it.page)
            else:
                builder.block(it.text, it.kind, page=it.page)  # type: ignore[arg-type]
    root = builder.finish()
    title = meta_title.strip() or first_heading or raw.path.stem
    return ParsedDocument(
        uri=raw.uri,
        title=title,
        mime=MIME,
        root=root,
        sha256=raw.sha256,
        bytes=raw.size,
        pages=page_count,
        links=links,
        warnings=warnings,
        metadata=metadata,
    )


__all__ = ["parse_pdf"]
