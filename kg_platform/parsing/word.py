"""DOCX to Markdown: mammoth (the library markitdown uses) called so that one bad element does
not lose the file.

markitdown reads every image's bytes to inline it, so a picture *linked* by URL (its part is not
in the package) raises ``KeyError`` and the whole document was refused. Here images are never
inlined (chunks keep their alt text only): each is checked on its own, and one whose data is
missing is skipped with a warning naming it. Alt text Office generates ("... Description
automatically generated") is not the author's and is dropped. Word's ``Title`` style becomes a
top heading; a chart (which mammoth drops) becomes its title, its kind and its data as a table,
in place; merged table cells are repeated where they span; Word's automatic heading numbers
("2.1") are written before the titles (:mod:`kg_platform.parsing._numbering`). Should mammoth still fail, the
paragraphs are read one by one from the document XML (headings from their style, tables row by
row) and a warning says so; only a package that neither can read is refused.
"""

from __future__ import annotations

import re
from pathlib import Path
from collections.abc import Sequence
from typing import Any

from kg_platform.errors import CorruptDocument
from kg_platform.parsing._numbering import number_headings, number_list_items, numbered_paragraphs
from kg_platform.parsing._tables import expand_spans

# Office's automatic alt text ("A picture containing text Description automatically generated",
# newer versions: "A cartoon duck ... AI-generated content may be incorrect.")
GENERATED_ALT = re.compile(
    r"description\s+automatically\s+generated|ai-generated\s+content\s+may\s+be\s+incorrect",
    re.IGNORECASE,
)
_STYLE_MAP = "\n".join(
    [
        "p[style-name='Title'] => h1:fresh",
        "u => u",  # markitdown's own addition
    ]
)


# alt text that is only the picture's file name ("_good_picture.png", "image1.jpeg")
FILE_NAME_ALT = re.compile(r"^\S+\.(png|jpe?g|gif|bmp|tiff?|emf|wmf|svg|webp)$", re.IGNORECASE)


def clean_alt(alt: str | None) -> str:
    """The author's alt text, or "" when there is none, Office generated it or it is only the
    picture's file name."""
    alt = " ".join((alt or "").split())
    return "" if GENERATED_ALT.search(alt) or FILE_NAME_ALT.match(alt) else alt


_C = "{http://schemas.openxmlformats.org/drawingml/2006/chart}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_CHART_REL = re.compile(
    r'<Relationship [^>]*?Id="([^"]+)"[^>]*?Type="[^"]*/chart"[^>]*?Target="([^"]+)"'
    r'|<Relationship [^>]*?Type="[^"]*/chart"[^>]*?Id="([^"]+)"[^>]*?Target="([^"]+)"'
)
_CHART_HOLDER = re.compile(
    r"<mc:AlternateContent>(?:(?!</mc:AlternateContent>).)*?<c:chart [^>]*?r:id=\"([^\"]+)\""
    r".*?</mc:AlternateContent>"
    r"|<w:drawing>(?:(?!</w:drawing>).)*?<c:chart [^>]*?r:id=\"([^\"]+)\".*?</w:drawing>",
    re.DOTALL,
)
CHART_MARK = "KGPCHART{}END"


def _number(text: str) -> str:
    try:
        value = float(text)
    except ValueError:
        return text
    return str(int(value)) if value.is_integer() else format(value, ".15g")


def chart_markdown(xml: bytes) -> str:
    """A DrawingML chart part as Markdown: its title, its kind and its data as a table."""
    from xml.etree import ElementTree

    root = ElementTree.fromstring(xml)
    lines: list[str] = []
    title = root.find(f"{_C}chart/{_C}title")
    if title is not None:
        text = " ".join("".join(t.text or "" for t in title.iter(_A + "t")).split())
        if text:
            lines.append(text)
    plot = root.find(f"{_C}chart/{_C}plotArea")
    series = list(plot.iter(_C + "ser")) if plot is not None else []
    kinds = [
        child.tag.removeprefix(_C).removesuffix("Chart")
        for child in (plot if plot is not None else [])
        if child.tag.endswith("Chart")
    ]
    if kinds:
        lines.append(f"{kinds[0].replace('3D', ' 3D').lower()} chart")
    if not series:
        return "\n\n".join(lines)

    def points(element: object) -> dict[int, str]:
        if element is None:
            return {}
        return {
            int(pt.get("idx", "0")): (pt.findtext(_C + "v") or "").strip()
            for pt in element.iter(_C + "pt")  # type: ignore[attr-defined]
        }

    names = [
        " ".join("".join(v.text or "" for v in (ser.find(_C + "tx") or []).iter(_C + "v")).split())
        or f"Series {k + 1}"
        for k, ser in enumerate(series)
    ]
    values = [points(ser.find(_C + "val")) for ser in series]
    categories = points(series[0].find(_C + "cat"))
    count = max([len(categories)] + [max(v, default=-1) + 1 for v in values])
    rows = [[""] + names]
    for i in range(count):
        rows.append([categories.get(i, str(i + 1))] + [_number(v.get(i, "")) for v in values])
    table = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
    table += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows[1:]]
    lines.append("\n".join(table))
    return "\n\n".join(lines)


def _with_chart_marks(path: Path, charts: dict[str, str], warnings: list[str]) -> Any:
    """The package with each chart drawing replaced by a text mark (mammoth drops charts), and
    ``charts`` filled with mark -> the chart as Markdown; None when the file has no chart."""
    import io
    import zipfile

    with zipfile.ZipFile(path) as zf:
        try:
            rels = zf.read("word/_rels/document.xml.rels").decode("utf-8", "replace")
        except KeyError:
            return None
        targets = {}
        for m in _CHART_REL.finditer(rels):
            rid, target = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
            targets[rid] = target
        if not targets:
            return None
        document = zf.read("word/document.xml").decode("utf-8")

        def mark(m: re.Match[str]) -> str:
            rid = m.group(1) or m.group(2)
            key = CHART_MARK.format(len(charts) + 1)
            target = targets.get(rid, "")
            part = "word/" + target.lstrip("/") if not target.startswith("/") else target[1:]
            try:
                charts[key] = chart_markdown(zf.read(part.replace("word/../", "")))
            except Exception as exc:  # noqa: BLE001 - a missing or damaged chart part
                warnings.append(f"skipped chart {target!r} ({type(exc).__name__}: {exc})")
                return ""
            return f"<w:t>{key}</w:t>"

        document = _CHART_HOLDER.sub(mark, document)
        if not charts:
            return None
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
            for item in zf.infolist():
                data = document.encode("utf-8") if item.filename == "word/document.xml" else None
                dst.writestr(item, data if data is not None else zf.read(item))
    out.seek(0)
    return out


def _mammoth_html(
    path: Path, warnings: list[str], charts: dict[str, str], extra_styles: Sequence[str] = ()
) -> str:
    import mammoth
    from mammoth import html as mhtml
    from markitdown.converter_utils.docx.pre_process import pre_process_docx

    skipped = 0

    def convert_image(image: Any) -> list[Any]:
        nonlocal skipped
        alt = clean_alt(image.alt_text)
        try:
            with image.open():
                pass
        except Exception as exc:  # noqa: BLE001 - missing part (KeyError), bad target, ...
            skipped += 1
            name = f" {alt!r}" if alt else ""
            warnings.append(
                f"skipped image{name}: its data is not in the file "
                f"({type(exc).__name__}: {str(exc).strip(chr(34))})"
            )
            return []
        # an image without (author's) alt text stays a figure, so a caption can attach to it
        return [mhtml.element("img", {"alt": alt, "src": "image"})]

    marked = _with_chart_marks(path, charts, warnings)
    if marked is not None:
        stream = pre_process_docx(marked)
    else:
        with open(path, "rb") as fh:
            stream = pre_process_docx(fh)
    embedded = mammoth.read_embedded_style_map(stream) or ""
    stream.seek(0)
    result = mammoth.convert_to_html(
        stream,
        style_map="\n".join(p for p in (embedded, _STYLE_MAP, *extra_styles) if p),
        include_embedded_style_map=False,
        convert_image=convert_image,
    )
    return str(result.value)


_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def _xml_text(element: Any) -> str:
    return " ".join("".join(t.text or "" for t in element.iter(_W + "t")).split())


def _fallback_markdown(path: Path) -> str:
    """Paragraphs and tables in body order, read from ``word/document.xml`` itself (headings
    from their ``Title``/``HeadingN`` style; no lists, images or notes)."""
    import zipfile
    from xml.etree import ElementTree

    with zipfile.ZipFile(path) as zf:
        root = ElementTree.fromstring(zf.read("word/document.xml"))
    body = root.find(_W + "body")
    if body is None:
        raise ValueError("word/document.xml has no w:body")
    out: list[str] = []
    for child in body:
        if child.tag == _W + "p":
            text = _xml_text(child)
            if not text:
                continue
            style = child.find(f"{_W}pPr/{_W}pStyle")
            name = style.get(_W + "val", "") if style is not None else ""
            level = re.fullmatch(r"[Hh]eading\s?(\d)", name)
            if name == "Title":
                out.append("# " + text)
            elif level:
                out.append("#" * int(level.group(1)) + " " + text)
            else:
                out.append(text)
        elif child.tag == _W + "tbl":
            rows = [
                [_xml_text(cell).replace("|", "\\|") for cell in tr.findall(_W + "tc")]
                for tr in child.findall(_W + "tr")
            ]
            rows = [r for r in rows if r]
            if rows:
                n = max(len(r) for r in rows)
                rows = [r + [""] * (n - len(r)) for r in rows]
                lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * n]
                out.append("\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows[1:]]))
    return "\n\n".join(out)


def docx_markdown(path: Path, warnings: list[str]) -> str:
    """The document as Markdown; element failures become ``warnings``."""
    from markitdown.converters import HtmlConverter

    charts: dict[str, str] = {}
    try:
        numbers, items, heading_styles = numbered_paragraphs(path)
    except Exception as exc:  # noqa: BLE001 - numbering is an addition; the text still lands
        numbers, items, heading_styles = [], [], []
        warnings.append(f"heading numbers not read ({type(exc).__name__}: {exc})")
    try:
        html = _mammoth_html(path, warnings, charts, heading_styles)
    except Exception as exc:  # noqa: BLE001 - whatever mammoth chokes on, try the plain reader
        first = f"{type(exc).__name__}: {exc}"
    else:
        from bs4 import BeautifulSoup

        soup = BeautifulSoup(html, "html.parser")
        if expand_spans(soup):  # merged cells repeated where they span
            html = str(soup)
        markdown = HtmlConverter().convert_string(html).markdown or ""
        for key, chart in charts.items():  # each chart at its place, as its own blocks
            markdown = markdown.replace(key, "\n\n" + chart + "\n\n")
        return number_list_items(number_headings(markdown, numbers), items)
    try:
        text = _fallback_markdown(path)
    except Exception as exc:  # noqa: BLE001 - neither reader can open it: the file is damaged
        raise CorruptDocument(
            f"{path}: the .docx package opens as a ZIP but its document cannot be read "
            f"(converter: {first}; paragraph reader: {type(exc).__name__}: {exc})",
            hint="open and re-save it in Word/LibreOffice, then retry",
        ) from None
    warnings.append(
        f"the converter failed ({first}); text read paragraph by paragraph: "
        "lists, images and notes are not kept"
    )
    return number_headings(text, numbers)


__all__ = ["GENERATED_ALT", "clean_alt", "docx_markdown"]
