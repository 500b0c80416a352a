"""PPTX to Markdown with python-pptx, shape by shape, so one bad shape does not lose the deck.

The output is the Markdown markitdown writes (a ``<!-- Slide number: N -->`` marker per slide,
the title shape as ``#``, tables as Markdown tables) with what a reader of the slides sees and
review comments (with author and time) and nothing else: speaker notes stay out of the body
(a "Speaker notes" subsection per slide when ``ingest.slide_notes`` is "section"), pictures contribute their author's alt text
only (not their file or shape names, not Office's generated descriptions), a chart is its title
and its data as a table (integral values written as integers), a merged table cell's text is
repeated in every slot it covers (so each row reads whole). A shape python-pptx cannot read (an
unrecognised shape type, a chart of an unsupported kind) is skipped with a warning naming the
slide and the shape.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kg_platform.errors import CorruptDocument
from kg_platform.parsing.word import clean_alt


def _cell(text: Any) -> str:
    if isinstance(text, float) and text.is_integer():
        text = int(text)
    return " ".join(str("" if text is None else text).split()).replace("|", "\\|")


def _markdown_table(rows: list[list[str]]) -> str:
    n = max(len(r) for r in rows)
    rows = [r + [""] * (n - len(r)) for r in rows]
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * n]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows[1:]])


def _table(table: Any) -> str:
    rows = list(table.rows)
    ncols = len(table.columns)
    grid = [[""] * ncols for _ in rows]
    for r, row in enumerate(rows):
        for c, cell in enumerate(row.cells):
            if cell.is_spanned:
                continue  # filled from its merge origin
            text = _cell(cell.text)
            height = cell.span_height if cell.is_merge_origin else 1
            width = cell.span_width if cell.is_merge_origin else 1
            for rr in range(r, min(r + height, len(rows))):
                for cc in range(c, min(c + width, ncols)):
                    grid[rr][cc] = text
    return _markdown_table(grid) if grid and ncols else ""


def _chart(chart: Any) -> list[str]:
    out: list[str] = []
    if chart.has_title and chart.chart_title.has_text_frame:
        title = " ".join(chart.chart_title.text_frame.text.split())
        if title:
            out.append(title)
    plot = chart.plots[0]  # raises for plot types python-pptx does not support
    categories = [_cell(c) for c in plot.categories]
    series = list(chart.series)
    rows = [[""] + [_cell(s.name) for s in series]]
    values = [list(s.values) for s in series]
    for k, category in enumerate(categories):
        rows.append([category] + [_cell(v[k]) if k < len(v) else "" for v in values])
    if len(rows) > 1:
        out.append(_markdown_table(rows))
    return out


def _xml_text(shape: Any) -> str:
    """The text runs of a shape python-pptx cannot model, read from its XML (one line each
    paragraph)."""
    a = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
    try:
        paras = list(shape._element.iter(a + "p"))
        lines = [" ".join("".join(t.text or "" for t in p.iter(a + "t")).split()) for p in paras]
    except Exception:  # noqa: BLE001 - nothing readable
        return ""
    return "\n".join(line for line in lines if line)


def _position(shape: Any) -> tuple[float, float]:
    top, left = shape.top, shape.left
    return (float("-inf") if top is None else top, float("-inf") if left is None else left)


class _Slide:
    def __init__(self, number: int, warnings: list[str]) -> None:
        self.number = number
        self.warnings = warnings
        self.parts: list[str] = []

    def skip(self, shape: Any, what: str, exc: Exception, kept_text: bool = False) -> None:
        name = getattr(shape, "name", "") or "?"
        kept = "; its text is kept" if kept_text else ""
        self.warnings.append(
            f"slide {self.number}: skipped {what} {name!r} ({type(exc).__name__}: {exc}){kept}"
        )

    def shapes(self, shapes: Any, title_id: int | None) -> None:
        for shape in sorted(shapes, key=_position):
            try:
                self.shape(shape, title_id)
            except Exception as exc:  # noqa: BLE001 - python-pptx: NotImplementedError, ...
                text = _xml_text(shape)
                if text:
                    self.parts.append(text)
                self.skip(shape, "shape", exc, kept_text=bool(text))

    def shape(self, shape: Any, title_id: int | None) -> None:
        from pptx.enum.shapes import MSO_SHAPE_TYPE

        kind = shape.shape_type  # NotImplementedError for shapes python-pptx does not know
        if kind == MSO_SHAPE_TYPE.GROUP:
            self.shapes(shape.shapes, title_id)
            return
        if getattr(shape, "has_chart", False) and shape.has_chart:
            try:
                self.parts.extend(_chart(shape.chart))
            except Exception as exc:  # noqa: BLE001 - unsupported plot type, damaged chart part
                self.skip(shape, "chart", exc)
            return
        if getattr(shape, "has_table", False) and shape.has_table:
            self.parts.append(_table(shape.table))
            return
        if kind == MSO_SHAPE_TYPE.PICTURE or (
            kind == MSO_SHAPE_TYPE.PLACEHOLDER and not getattr(shape, "has_text_frame", False)
        ):
            try:
                alt = clean_alt(shape._element._nvXxPr.cNvPr.attrib.get("descr", ""))
            except AttributeError:
                alt = ""
            if alt:
                self.parts.append(f"![{alt.replace(']', ' ')}](image)")
            return
        if getattr(shape, "has_text_frame", False) and shape.has_text_frame:
            lines = [" ".join(p.text.split()) for p in shape.text_frame.paragraphs]
            text = "\n".join(line for line in lines if line)
            if not text:
                return
            if title_id is not None and shape.shape_id == title_id:
                self.parts.append("# " + " ".join(text.split()))
            else:
                self.parts.append(text)


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _authors(presentation: Any) -> dict[str, str]:
    """Comment author id -> "Name (initials)", from the legacy or the modern authors part."""
    from xml.etree import ElementTree

    out: dict[str, str] = {}
    for rel in presentation.part.rels.values():
        if not rel.reltype.lower().endswith(("/commentauthors", "/authors")):
            continue
        for el in ElementTree.fromstring(rel.target_part.blob).iter():
            if _local(el.tag) in ("cmAuthor", "author") and el.get("name"):
                initials = f" ({el.get('initials')})" if el.get("initials") else ""
                out[el.get("id", "")] = el.get("name", "") + initials
    return out


def _comments(slide: Any, authors: dict[str, str]) -> list[str]:
    """The slide's review comments (legacy and modern parts), each as one paragraph naming its
    author and time."""
    from xml.etree import ElementTree

    out: list[str] = []
    for rel in slide.part.rels.values():
        if not rel.reltype.lower().endswith("/comments"):
            continue
        for cm in ElementTree.fromstring(rel.target_part.blob).iter():
            if _local(cm.tag) != "cm":
                continue
            texts = [el.text or "" for el in cm.iter() if _local(el.tag) in ("text", "t")]
            text = " ".join(" ".join(texts).split())
            if text:
                author = authors.get(cm.get("authorId", ""), "unknown")
                when = cm.get("dt") or cm.get("created") or ""
                out.append(f"[author: {author}, time: {when}]: {text}")
    return out


def _notes(slide: Any) -> str:
    if not slide.has_notes_slide:
        return ""
    frame = slide.notes_slide.notes_text_frame
    lines = [" ".join(p.text.split()) for p in frame.paragraphs] if frame is not None else []
    return "\n".join(line for line in lines if line)


def _notes_setting() -> bool:
    from kg_platform.config import get_settings

    return get_settings().ingest.slide_notes == "section"


def pptx_markdown(path: Path, warnings: list[str], notes: bool | None = None) -> str:
    """The presentation as Markdown with slide markers; shape failures become ``warnings``.

    Review comments follow their slide's content, one paragraph each with author and time.
    Speaker notes are left out unless ``notes`` (default: the ``ingest.slide_notes`` setting
    is "section"): then each slide's notes are a "Speaker notes" subsection of that slide."""
    import pptx

    if notes is None:
        notes = _notes_setting()

    try:
        presentation = pptx.Presentation(str(path))
        slides = list(presentation.slides)
    except Exception as exc:  # noqa: BLE001 - python-pptx raises many types on damaged parts
        raise CorruptDocument(
            f"{path}: the .pptx package opens as a ZIP but python-pptx cannot read its "
            f"presentation ({type(exc).__name__}: {exc})",
            hint="open and re-save it in PowerPoint/LibreOffice, then retry",
        ) from None
    try:
        authors = _authors(presentation)
    except Exception as exc:  # noqa: BLE001 - a damaged authors part: comments stay anonymous
        authors = {}
        warnings.append(f"comment authors not read ({type(exc).__name__}: {exc})")
    out: list[str] = []
    for number, slide in enumerate(slides, start=1):
        page = _Slide(number, warnings)
        try:
            title = slide.shapes.title
            title_id = title.shape_id if title is not None else None
        except Exception:  # noqa: BLE001 - an unreadable placeholder: no title shape
            title_id = None
        page.shapes(slide.shapes, title_id)
        out.append(f"<!-- Slide number: {number} -->")
        out.extend(p for p in page.parts if p.strip())
        try:
            out.extend(_comments(slide, authors))
            spoken = _notes(slide) if notes else ""
        except Exception as exc:  # noqa: BLE001 - a damaged comments or notes part
            warnings.append(f"slide {number}: skipped comments/notes ({type(exc).__name__}: {exc})")
            spoken = ""
        if spoken:
            out.extend(["## Speaker notes", spoken])
    return "\n\n".join(out)


__all__ = ["pptx_markdown"]
