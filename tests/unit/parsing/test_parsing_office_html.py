"""DOCX / PPTX / XLSX / HTML / EML: converted to Markdown (markitdown) or read with ``email``."""

from __future__ import annotations

from email.message import EmailMessage
from pathlib import Path

import pytest

from kg_platform.errors import CorruptDocument, EncryptedDocument
from kg_platform.parsing import ParsedDocument, parse_file


def section(doc: ParsedDocument, title: str):
    found = [s for s in doc.sections() if s.title == title]
    assert found, f"no section {title!r}; have {[s.title for s in doc.sections()]}"
    return found[0]


def blocks(doc: ParsedDocument, kind: str | None = None):
    return [b for s in doc.sections() for b in s.blocks if kind is None or b.kind == kind]


# -- DOCX ----------------------------------------------------------------------------------------
def test_docx_nested_heading_levels(docs, sources):
    doc = parse_file(docs / "docx" / "docling-unit_test_headers.docx")
    s1, s11, s12, s123 = (
        section(doc, t) for t in ("Section 1", "Section 1.1", "Section 1.2", "Section 1.2.3")
    )
    assert (s1.level, s11.level, s12.level, s123.level) == (1, 2, 2, 3)
    assert s11 in s1.children and s12 in s1.children and s123 in s12.children
    s2, s211 = section(doc, "Section 2"), section(doc, "Section 2.1.1")
    assert s211.level == 3 and s211 in s2.children  # H1 -> H3 nests directly
    assert [b.text for b in s11.blocks] == ["Paragraph 1.1.1", "Paragraph 1.1.2"]
    assert doc.sha256 == sources["docx/docling-unit_test_headers.docx"]["sha256"]
    assert doc.mime.endswith("wordprocessingml.document")


def test_docx_tables_with_merged_cells(docs):
    doc = parse_file(docs / "docx" / "docling-word_tables.docx")
    tables = blocks(doc, "table")
    assert len(tables) >= 7
    assert any("Merged Cell 1.1 1.2" in t.text for t in tables)
    assert any("Cell 8.4" in t.text for t in tables)
    assert all(t.text.lstrip().startswith("|") for t in tables)
    assert doc.title == "Test with tables"


def test_docx_lists_table_and_figure_caption(docs):
    doc = parse_file(docs / "docx" / "docling-word_sample.docx")
    figure = blocks(doc, "figure")[0]
    assert figure.text.startswith("Figure 1: This is a cute duckling")
    assert any(
        "Wear sunglasses" in b.text and "Use sun cream" in b.text for b in blocks(doc, "list")
    )  # one list stays one block
    eat = section(doc, "Let’s eat")
    assert eat.level == 2
    assert any("Calories per portion" in b.text for b in eat.blocks if b.kind == "table")


def test_docx_paper(docs):
    doc = parse_file(docs / "docx" / "markitdown-test.docx")
    assert section(doc, "Abstract").level == 1
    assert section(doc, "Introduction").level == 1
    assert blocks(doc, "table")


def test_docx_that_is_not_a_zip(tmp_path):
    bad = tmp_path / "report.docx"
    bad.write_text("this is plain text with a .docx name")
    with pytest.raises(CorruptDocument, match="no ZIP container"):
        parse_file(bad)


def test_password_protected_office_file(tmp_path):
    # encrypted OOXML is an OLE compound file holding an "EncryptionInfo" stream
    bad = tmp_path / "locked.docx"
    bad.write_bytes(
        b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
        + b"\x00" * 600
        + "EncryptionInfo".encode("utf-16-le")
        + b"\x00" * 600
    )
    with pytest.raises(EncryptedDocument):
        parse_file(bad)


# -- PPTX / XLSX (generated with the libraries markitdown itself uses) ----------------------------
def test_pptx_slides_become_sections_with_slide_numbers(tmp_path):
    pptx = pytest.importorskip("pptx")
    prs = pptx.Presentation()
    for title, body in [
        ("Quarterly review", "Revenue grew in every region."),
        ("Next steps", "Hire two engineers for the graph team."),
    ]:
        slide = prs.slides.add_slide(prs.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
    path = tmp_path / "deck.pptx"
    prs.save(path)
    doc = parse_file(path)
    assert doc.mime.endswith("presentationml.presentation")
    assert doc.pages == 2
    nxt = section(doc, "Next steps")
    assert nxt.page == 2
    assert any("Hire two engineers" in b.text and b.page == 2 for b in nxt.blocks)
    assert any("Revenue grew" in b.text and b.page == 1 for b in blocks(doc))


def test_xlsx_sheets_become_sections_with_tables(tmp_path):
    openpyxl = pytest.importorskip("openpyxl")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Budget"
    ws.append(["item", "cost"])
    ws.append(["graph server", 1234])
    path = tmp_path / "budget.xlsx"
    wb.save(path)
    doc = parse_file(path)
    budget = section(doc, "Budget")
    assert any(
        b.kind == "table" and "graph server" in b.text and "1234" in b.text for b in budget.blocks
    )


# -- HTML ---------------------------------------------------------------------------------------
def test_wikipedia_duck(docs):
    doc = parse_file(docs / "html" / "wikipedia-duck.html")
    assert doc.title == "Duck - Wikipedia"
    duck = section(doc, "Duck")
    assert duck.level == 1
    etymology = section(doc, "Etymology")
    assert etymology.level == 2 and etymology in duck.children
    feeding = section(doc, "Feeding")
    assert feeding.level == 3 and feeding in section(doc, "Behaviour").children
    assert any("Anatidae" in b.text for b in blocks(doc, "table"))  # the infobox
    text = doc.text()
    assert "Main menu" not in text and "move to sidebar" not in text  # page chrome removed
    assert "](" not in text  # link targets stripped
    assert any("wikipedia.org" in link or link.startswith("/wiki/") for link in doc.links)


def test_wikipedia_microsoft(docs):
    doc = parse_file(docs / "html" / "wikipedia-microsoft.html")
    assert doc.title == "Microsoft - Wikipedia"
    history = section(doc, "History")
    assert history.level == 2
    assert section(doc, "1972–1985: Founding") in history.children


def test_blog_post(docs):
    doc = parse_file(docs / "html" / "autogen-blog.html")
    assert doc.title.startswith("Does Model and Inference Parameter Matter")
    assert section(doc, "Experiment Setup").level == 2  # zero-width spaces removed from titles
    assert doc.links and all(not link.startswith("#") for link in doc.links)


def test_small_html_title_links_and_base(tmp_path):
    page = tmp_path / "page.htm"
    page.write_text(
        """<html><head><title>Caf\u00e9 guide</title><base href="https://ex.org/a/">
    </head><body><nav><a href="/home">Home</a> menu junk</nav>
    <h1>Coffee</h1><p>See <a href="beans.html">beans</a> and <a href="#top">top</a>.</p>
    <h2>Roasting</h2><table><tr><th>Roast</th><th>Temp</th></tr><tr><td>Dark</td><td>240</td>
    </tr></table><footer>copyright</footer></body></html>""",
        encoding="utf-8",
    )
    doc = parse_file(page)
    assert doc.title == "Café guide"
    assert doc.links == ["https://ex.org/a/beans.html"]
    roast = section(doc, "Roasting")
    assert roast.level == 2 and roast in section(doc, "Coffee").children
    assert any("Dark" in b.text and b.kind == "table" for b in roast.blocks)
    assert "menu junk" not in doc.text() and "copyright" not in doc.text()


# -- EML ----------------------------------------------------------------------------------------
def _eml(path: Path, *, plain: str | None, html: str | None) -> Path:
    msg = EmailMessage()
    msg["Subject"] = "Graph  migration plan"
    msg["From"] = "ana@example.org"
    msg["To"] = "team@example.org"
    if plain is not None:
        msg.set_content(plain)
    if html is not None:
        if plain is None:
            msg.set_content(html, subtype="html")
        else:
            msg.add_alternative(html, subtype="html")
    path.write_bytes(msg.as_bytes())
    return path


def test_eml_plain_body(tmp_path):
    path = _eml(
        tmp_path / "plan.eml",
        plain="Hi team,\n\nthe café opens at 9. Details at https://ex.org/plan.\n\nAna",
        html="<p>ignored html</p>",
    )
    doc = parse_file(path)
    assert doc.title == "Graph migration plan"
    assert [b.text for b in doc.root.blocks][1].startswith("the café opens")
    assert doc.links == ["https://ex.org/plan"]
    assert doc.metadata["from"] == "ana@example.org"
    assert doc.mime == "message/rfc822"


def test_eml_html_only_body(tmp_path):
    path = _eml(
        tmp_path / "html.eml",
        plain=None,
        html="<h1>Plan</h1><p>Move the <a href='https://ex.org/db'>database</a>.</p>",
    )
    doc = parse_file(path)
    assert doc.title == "Graph migration plan"
    assert section(doc, "Plan").blocks[0].text == "Move the database."
    assert doc.links == ["https://ex.org/db"]


def test_eml_without_headers(tmp_path):
    path = tmp_path / "x.eml"
    path.write_text("no headers here, just a sentence\n")
    with pytest.raises(CorruptDocument, match="no e-mail headers"):
        parse_file(path)


def test_html_encoding_from_meta_charset(tmp_path):
    page = tmp_path / "latin.html"
    page.write_bytes(
        '<html><head><meta charset="iso-8859-1"><title>Menu du café</title></head>'
        "<body><h1>Carte</h1><p>Crème brûlée à volonté.</p></body></html>".encode("latin-1")
    )
    doc = parse_file(page)
    assert doc.title == "Menu du café"
    assert section(doc, "Carte").blocks[0].text == "Crème brûlée à volonté."
    assert doc.warnings == []


def test_html_invalid_bytes_are_counted(tmp_path):
    page = tmp_path / "bad.html"
    page.write_bytes(
        b'<html><head><meta charset="utf-8"><title>T</title></head><body>'
        b"<p>ok \xff\xfe bad caf\xc3\xa9</p></body></html>"
    )
    doc = parse_file(page)
    assert doc.warnings == ["2 invalid byte(s) for encoding utf-8 were replaced by U+FFFD"]
    assert "ok \ufffd\ufffd bad café" in doc.text()
