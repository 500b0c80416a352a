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


# -- one bad element does not lose the document ---------------------------------------------------
_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)
_W_NS = (
    'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" '
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" '
    'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" '
    'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
    'xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"'
)
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"


def _para(text: str, style: str | None = None) -> str:
    ppr = f'<w:pPr><w:pStyle w:val="{style}"/></w:pPr>' if style else ""
    return f"<w:p>{ppr}<w:r><w:t>{text}</w:t></w:r></w:p>"


def _picture(rid: str, descr: str = "") -> str:
    return (
        '<w:p><w:r><w:drawing><wp:inline><wp:extent cx="9525" cy="9525"/>'
        f'<wp:docPr id="1" name="Picture 1" descr="{descr}"/>'
        '<a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture">'
        '<pic:pic><pic:nvPicPr><pic:cNvPr id="1" name="p.png"/><pic:cNvPicPr/></pic:nvPicPr>'
        f'<pic:blipFill><a:blip r:embed="{rid}"/></pic:blipFill><pic:spPr/></pic:pic>'
        "</a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>"
    )


def _docx(
    path: Path,
    body: str,
    rels: str = "",
    parts: dict[str, str] | None = None,
    styles: str | None = None,
) -> Path:
    """A minimal Word package (what python-docx would write, without needing it)."""
    import zipfile

    styles = styles or "".join(
        f'<w:style w:type="paragraph" w:styleId="{sid}"><w:name w:val="{name}"/></w:style>'
        for sid, name in (("Title", "Title"), ("Heading1", "heading 1"))
    )
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(
            "[Content_Types].xml",
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" '
            'ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/>'
            '<Default Extension="png" ContentType="image/png"/>'
            '<Override PartName="/word/document.xml" ContentType="application/'
            'vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
        )
        zf.writestr(
            "_rels/.rels",
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            f'<Relationship Id="rId1" Type="{_REL}/officeDocument" Target="word/document.xml"/>'
            "</Relationships>",
        )
        zf.writestr(
            "word/_rels/document.xml.rels",
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            f'<Relationship Id="rIdS" Type="{_REL}/styles" Target="styles.xml"/>{rels}'
            "</Relationships>",
        )
        zf.writestr("word/styles.xml", f"<w:styles {_W_NS}>{styles}</w:styles>")
        zf.writestr("word/media/image1.png", _PNG)
        zf.writestr(
            "word/document.xml", f"<w:document {_W_NS}><w:body>{body}</w:body></w:document>"
        )
        for name, text in (parts or {}).items():
            zf.writestr(name, text)
    return path


def test_docx_with_an_image_linked_by_url_lands_with_a_warning(tmp_path):
    external = (
        f'<Relationship Id="rIdX" Type="{_REL}/image" '
        'Target="https://example.com/image.png" TargetMode="External"/>'
    )
    body = (
        _para("Site survey", "Heading1")
        + _para("The north wall was inspected before the rain.")
        + _picture("rIdX")
        + _para("Cracks were found near the east corner.")
    )
    doc = parse_file(_docx(tmp_path / "survey.docx", body, external))
    text = doc.text()
    assert "north wall was inspected" in text and "Cracks were found" in text
    assert section(doc, "Site survey").level == 1
    assert len(doc.warnings) == 1
    assert "skipped image" in doc.warnings[0] and "https://example.com/image.png" in doc.warnings[0]


def test_docx_generated_alt_text_is_not_content_and_authors_alt_text_is(tmp_path):
    embedded = f'<Relationship Id="rIdI" Type="{_REL}/image" Target="media/image1.png"/>'
    body = (
        _para("Before the pictures.")
        + _picture("rIdI", "A close up of a logo Description automatically generated")
        + _picture("rIdI", "Map of the north wall")
        + _picture("rIdI", "_wall_photo.png")
        + _para("After the pictures.")
    )
    doc = parse_file(_docx(tmp_path / "alt.docx", body, embedded))
    assert "automatically generated" not in doc.text() and "wall_photo" not in doc.text()
    assert "Map of the north wall" in [b.text for b in blocks(doc, "figure")]
    assert "Before the pictures." in doc.text() and "After the pictures." in doc.text()
    assert doc.warnings == []


def test_docx_title_style_is_a_heading(tmp_path):
    body = (
        _para("Annual safety report", "Title")
        + _para("Findings", "Heading1")
        + _para("No incident was recorded.")
    )
    doc = parse_file(_docx(tmp_path / "titled.docx", body))
    assert section(doc, "Annual safety report").level == 1
    assert section(doc, "Findings").blocks[0].text == "No incident was recorded."


def test_docx_the_converter_cannot_read_falls_back_to_the_paragraphs(tmp_path):
    # a damaged styles part (truncated XML) makes mammoth give up on the whole file
    path = _docx(tmp_path / "odd.docx", _para("Kept text", "Heading1") + _para("Body text."))
    import zipfile

    broken = tmp_path / "odd2.docx"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(broken, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            dst.writestr(item, b"<w:styles" if item.filename == "word/styles.xml" else data)
    doc = parse_file(broken)
    assert "Body text." in doc.text()
    assert section(doc, "Kept text").level == 1
    assert any("read paragraph by paragraph" in w for w in doc.warnings)


def _pptx_with_unrecognised_shape(path: Path) -> Path:
    """Two slides; slide 2 holds a shape with neither preset nor custom geometry, which
    python-pptx cannot type (``shape_type`` raises NotImplementedError)."""
    pptx = pytest.importorskip("pptx")
    from pptx.util import Inches

    prs = pptx.Presentation()
    one = prs.slides.add_slide(prs.slide_layouts[1])
    one.shapes.title.text = "Q3 revenue"
    one.placeholders[1].text = "Total revenue grew 18% year over year."
    two = prs.slides.add_slide(prs.slide_layouts[5])
    two.shapes.title.text = "Next steps"
    box = two.shapes.add_textbox(Inches(1), Inches(2), Inches(4), Inches(1))
    box.text_frame.text = "Text in an odd shape"
    sp = box._element
    sp.nvSpPr.cNvSpPr.attrib.pop("txBox", None)
    geom = sp.spPr.find("{http://schemas.openxmlformats.org/drawingml/2006/main}prstGeom")
    sp.spPr.remove(geom)
    keep = two.shapes.add_textbox(Inches(1), Inches(4), Inches(4), Inches(1))
    keep.text_frame.text = "Launch the APAC campaign."
    notes = two.notes_slide.notes_text_frame
    notes.text = "Speaker reminder: smile."
    prs.save(str(path))
    return path


def test_pptx_with_an_unrecognised_shape_lands_with_a_warning(tmp_path):
    doc = parse_file(_pptx_with_unrecognised_shape(tmp_path / "deck.pptx"))
    assert doc.pages == 2
    assert section(doc, "Next steps").page == 2
    text = doc.text()
    assert "Total revenue grew" in text and "Launch the APAC campaign." in text
    assert "Text in an odd shape" in text  # read from the shape's XML
    assert len(doc.warnings) == 1 and doc.warnings[0].startswith("slide 2: skipped shape")
    assert "NotImplementedError" in doc.warnings[0]
    assert "Speaker reminder" not in text  # notes are not slide content


def test_pptx_table_merges_repeat_and_chart_values_are_integers(tmp_path):
    pptx = pytest.importorskip("pptx")
    from pptx.chart.data import CategoryChartData
    from pptx.enum.chart import XL_CHART_TYPE
    from pptx.util import Inches

    prs = pptx.Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[5])
    slide.shapes.title.text = "Ducks"
    table = slide.shapes.add_table(3, 2, Inches(1), Inches(1.5), Inches(4), Inches(1)).table
    for r, row in enumerate([["Region", "Count"], ["North", "12"], ["", "15"]]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    table.cell(1, 0).merge(table.cell(2, 0))  # "North" spans two rows
    data = CategoryChartData()
    data.categories = ["2019", "2020"]
    data.add_series("Freshwater", (120, 130))
    slide.shapes.add_chart(
        XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(1), Inches(3), Inches(4), Inches(3), data
    )
    prs.save(str(tmp_path / "ducks.pptx"))
    doc = parse_file(tmp_path / "ducks.pptx")
    tables = [b.text for b in blocks(doc, "table")]
    assert "| North | 12 |" in tables[0] and "| North | 15 |" in tables[0]
    assert "| 2019 | 120 |" in tables[1] and "120.0" not in tables[1]


def test_office_zip_that_python_pptx_cannot_read_is_corrupt_with_a_diagnosis(tmp_path):
    import zipfile

    bad = tmp_path / "broken.pptx"
    with zipfile.ZipFile(bad, "w") as zf:
        zf.writestr("ppt/presentation.xml", "<not-a-presentation/>")
    with pytest.raises(CorruptDocument, match="python-pptx cannot read its presentation"):
        parse_file(bad)


def test_html_merged_cells_are_repeated_so_later_cells_do_not_shift(tmp_path):
    page = tmp_path / "spans.html"
    page.write_text(
        "<html><body><table>"
        "<tr><th>State</th><th colspan='2'>Checks</th></tr>"
        "<tr><td rowspan='2'>Texas</td><td>Nov</td><td>146,982</td></tr>"
        "<tr><td>Dec</td><td>150,001</td></tr>"
        "<tr><td>Utah</td><td>Nov</td><td>10,429</td></tr>"
        "</table></body></html>",
        encoding="utf-8",
    )
    table = blocks(parse_file(page), "table")[0].text.splitlines()
    assert table[0] == "| State | Checks | Checks |"
    assert table[2:] == [
        "| Texas | Nov | 146,982 |",
        "| Texas | Dec | 150,001 |",
        "| Utah | Nov | 10,429 |",
    ]


_CHART = (
    '<c:chartSpace xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart" '
    'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><c:chart>'
    "<c:title><c:tx><c:rich><a:p><a:r><a:t>Ducks counted</a:t></a:r></a:p></c:rich></c:tx>"
    "</c:title><c:plotArea><c:barChart>"
    + "".join(
        f"<c:ser><c:tx><c:strRef><c:strCache><c:pt idx='0'><c:v>{name}</c:v></c:pt>"
        "</c:strCache></c:strRef></c:tx><c:cat><c:strRef><c:strCache>"
        "<c:pt idx='0'><c:v>2019</c:v></c:pt><c:pt idx='1'><c:v>2020</c:v></c:pt>"
        "</c:strCache></c:strRef></c:cat><c:val><c:numRef><c:numCache>"
        f"<c:pt idx='0'><c:v>{a}</c:v></c:pt><c:pt idx='1'><c:v>{b}</c:v></c:pt>"
        "</c:numCache></c:numRef></c:val></c:ser>"
        for name, a, b in (("Freshwater", "120.0", "4.4000000000000004"), ("Saltwater", "80", "95"))
    )
    + "</c:barChart></c:plotArea></c:chart></c:chartSpace>"
)


def test_docx_chart_becomes_its_title_and_a_table_in_place(tmp_path):
    chart_run = (
        '<w:p><w:r><w:drawing><wp:inline><wp:extent cx="9525" cy="9525"/>'
        '<wp:docPr id="2" name="Chart 1"/><a:graphic><a:graphicData '
        'uri="http://schemas.openxmlformats.org/drawingml/2006/chart">'
        '<c:chart xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart" r:id="rIdC"/>'
        "</a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>"
    )
    rel = f'<Relationship Id="rIdC" Type="{_REL}/chart" Target="charts/chart1.xml"/>'
    body = _para("Before the chart.") + chart_run + _para("After the chart.")
    path = _docx(tmp_path / "chart.docx", body, rel, {"word/charts/chart1.xml": _CHART})
    doc = parse_file(path)
    texts = [b.text for b in blocks(doc)]
    table = next(t for t in texts if t.startswith("|"))
    assert texts.index("Before the chart.") < texts.index(table) < texts.index("After the chart.")
    assert "Ducks counted" in texts and "bar chart" in texts
    assert table.splitlines()[0] == "|  | Freshwater | Saltwater |"
    assert "| 2019 | 120 | 80 |" in table and "| 2020 | 4.4 | 95 |" in table
    assert doc.warnings == []


MENU = (
    '<ul class="nav"><li><a href="#">My Section</a><ul class="dropdown-menu" role="menu">'
    '<li><a href="/start.html">Some page</a></li><li>This is my <a href="/home.html">Homepage'
    "</a><ul><li>List item inner</li><li>More text with some links and more text.</li></ul>"
    "</li></ul></li></ul>"
)


def test_html_page_that_is_all_navigation_keeps_it(tmp_path):
    page = tmp_path / "menu.html"
    page.write_text(f"<html><body>{MENU}</body></html>", encoding="utf-8")
    text = parse_file(page).text()
    for words in ("Some page", "Homepage", "List item inner", "More text with some links"):
        assert words in text


def test_html_menu_beside_an_article_is_dropped(tmp_path):
    article = "<p>" + "The platypus lays eggs and feeds its young on milk. " * 6 + "</p>"
    page = tmp_path / "article.html"
    page.write_text(f"<html><body>{MENU}{article}</body></html>", encoding="utf-8")
    text = parse_file(page).text()
    assert "platypus lays eggs" in text and "List item inner" not in text


def _style(sid: str, name: str, num: str = "", based: str = "") -> str:
    ppr = f"<w:pPr><w:numPr>{num}</w:numPr></w:pPr>" if num else ""
    base = f'<w:basedOn w:val="{based}"/>' if based else ""
    return f'<w:style w:type="paragraph" w:styleId="{sid}"><w:name w:val="{name}"/>{base}{ppr}</w:style>'


def test_docx_automatic_heading_numbers_are_kept(tmp_path):
    levels = "".join(
        f'<w:lvl w:ilvl="{k}"><w:start w:val="1"/><w:numFmt w:val="decimal"/>'
        f'<w:lvlText w:val="{".".join(f"%{j + 1}" for j in range(k + 1))}"/></w:lvl>'
        for k in range(3)
    )
    numbering = (
        f'<w:numbering {_W_NS}><w:abstractNum w:abstractNumId="0">{levels}</w:abstractNum>'
        '<w:abstractNum w:abstractNumId="1"><w:lvl w:ilvl="0"><w:start w:val="1"/>'
        '<w:numFmt w:val="none"/><w:lvlText w:val=""/></w:lvl></w:abstractNum>'
        '<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>'
        '<w:num w:numId="2"><w:abstractNumId w:val="1"/></w:num></w:numbering>'
    )
    styles = (
        _style("Heading1", "heading 1")
        + _style("Heading2", "heading 2", '<w:ilvl w:val="1"/><w:numId w:val="1"/>')
        + _style("Heading3", "heading 3", '<w:ilvl w:val="2"/><w:numId w:val="1"/>')
        + _style("RefHead", "heading 2 unnumbered", '<w:numId w:val="2"/>', based="Heading2")
    )
    h1 = '<w:p><w:pPr><w:pStyle w:val="Heading1"/><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr></w:pPr><w:r><w:t>{}</w:t></w:r></w:p>'
    body = (
        h1.format("Scope")
        + _para("Intro text.")
        + _para("Terms", "Heading2")
        + _para("Sizes", "Heading2")
        + _para("Small sizes", "Heading3")
        + h1.format("Method")
        + _para("Detail", "Heading3")
        + _para("Steps", "Heading2")
        + _para("References", "RefHead")
        + _para("A reference.")
    )
    rels = f'<Relationship Id="rIdN" Type="{_REL}/numbering" Target="numbering.xml"/>'
    doc = parse_file(
        _docx(tmp_path / "numbered.docx", body, rels, {"word/numbering.xml": numbering}, styles)
    )
    titles = [(s.level, s.title) for s in doc.sections()[1:]]
    assert titles == [
        (1, "1 Scope"),
        (2, "1.1 Terms"),
        (2, "1.2 Sizes"),
        (3, "1.2.1 Small sizes"),
        (1, "2 Method"),
        (3, "2.1.1 Detail"),  # a skipped level counts from its start, as Word shows it
        (2, "2.2 Steps"),
        (2, "References"),  # a style based on a heading style is a heading; no number shown
    ]


def _deck_with_notes(path: Path) -> Path:
    pptx = pytest.importorskip("pptx")
    prs = pptx.Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[1])
    slide.shapes.title.text = "Quarterly review"
    slide.placeholders[1].text = "Revenue grew in every region."
    slide.notes_slide.notes_text_frame.text = "Say the Nordic figure twice."
    prs.save(path)
    return path


def test_pptx_speaker_notes_out_of_the_body_unless_asked(tmp_path, monkeypatch):
    from kg_platform.config import get_settings

    path = _deck_with_notes(tmp_path / "notes.pptx")
    assert "Nordic" not in parse_file(path).text()
    monkeypatch.setenv("KGP_INGEST__SLIDE_NOTES", "section")
    get_settings.cache_clear()
    try:
        doc = parse_file(path)
    finally:
        monkeypatch.delenv("KGP_INGEST__SLIDE_NOTES")
        get_settings.cache_clear()
    notes = section(doc, "Speaker notes")
    assert [b.text for b in notes.blocks] == ["Say the Nordic figure twice."]
    assert notes.page == 1 and notes in section(doc, "Quarterly review").children
    assert not any("Nordic" in b.text for b in section(doc, "Quarterly review").blocks)


def test_pptx_review_comments_are_kept_with_author_and_time(docs_parsing):
    doc = parse_file(docs_parsing / "pptx" / "powerpoint_comments.pptx")
    features = section(doc, "Features")
    texts = [b.text for b in features.blocks]
    assert (
        "[author: Jane Smith (JS), time: 2026-06-18T17:37:55.253]: This is a cool feature" in texts
    )
    assert all(b.page == 3 for b in features.blocks)


def test_docx_list_items_keep_words_own_multi_level_numbers(tmp_path):
    # unit_test_headers_numbered.docx: a list whose levels start at 2 and 3 shows "2.3.1." in
    # Word; the converter numbers every level from 1
    starts = (2, 3, 1)
    levels = "".join(
        f'<w:lvl w:ilvl="{k}"><w:start w:val="{starts[k]}"/><w:numFmt w:val="decimal"/>'
        f'<w:lvlText w:val="{"".join(f"%{j + 1}." for j in range(k + 1))}"/></w:lvl>'
        for k in range(3)
    )
    numbering = (
        f'<w:numbering {_W_NS}><w:abstractNum w:abstractNumId="0">{levels}</w:abstractNum>'
        '<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num></w:numbering>'
    )
    item = (
        '<w:p><w:pPr><w:numPr><w:ilvl w:val="{}"/><w:numId w:val="1"/></w:numPr></w:pPr>'
        "<w:r><w:t>{}</w:t></w:r></w:p>"
    )
    body = (
        _para("Constraints follow.")
        + item.format(2, "Hardware constraints")
        + item.format(2, "Software constraints")
        + item.format(1, "Budget")
        + _para("The end.")
    )
    rels = f'<Relationship Id="rIdN" Type="{_REL}/numbering" Target="numbering.xml"/>'
    doc = parse_file(
        _docx(
            tmp_path / "list.docx",
            body,
            rels,
            {"word/numbering.xml": numbering},
            _style("N", "Normal"),
        )
    )
    text = doc.text()
    assert "2.3.1. Hardware constraints" in text
    assert "2.3.2. Software constraints" in text
    assert "2.4. Budget" in text
