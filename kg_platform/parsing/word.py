"""DOCX to Markdown: mammoth (the library markitdown uses) called so that one bad element does
not lose the file.

markitdown reads every image's bytes to inline it, so a picture *linked* by URL (its part is not
in the package) raises ``KeyError`` and the whole document was refused. Here images are never
inlined (chunks keep their alt text only): each is checked on its own, and one whose data is
missing is skipped with a warning naming it. Alt text Office generates ("... Description
automatically generated") is not the author's and is dropped. Word's ``Title`` style becomes a
top heading. Should mammoth still fail, the paragraphs are read one by one with python-docx
(from the document XML: headings from their style, tables row by row) and a warning says so; only a package that
neither can open is refused.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from kg_platform.errors import CorruptDocument
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


def _mammoth_html(path: Path, warnings: list[str]) -> str:
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

    with open(path, "rb") as fh:
        stream = pre_process_docx(fh)
    embedded = mammoth.read_embedded_style_map(stream) or ""
    stream.seek(0)
    result = mammoth.convert_to_html(
        stream,
        style_map="\n".join(p for p in (embedded, _STYLE_MAP) if p),
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

    try:
        html = _mammoth_html(path, warnings)
    except Exception as exc:  # noqa: BLE001 - whatever mammoth chokes on, try the plain reader
        first = f"{type(exc).__name__}: {exc}"
    else:
        from bs4 import BeautifulSoup

        soup = BeautifulSoup(html, "html.parser")
        if expand_spans(soup):  # merged cells repeated where they span
            html = str(soup)
        return HtmlConverter().convert_string(html).markdown or ""
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
    return text


__all__ = ["GENERATED_ALT", "clean_alt", "docx_markdown"]
