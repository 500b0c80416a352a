"""PDF parsing on the real bench PDFs, plus encrypted / truncated / image-only / missing-extra."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from kg_platform.errors import CorruptDocument, EncryptedDocument, NeedsOCR, UnsupportedFormat
from kg_platform.parsing import ParsedDocument, parse_file

pymupdf = pytest.importorskip("pymupdf")

_CACHE: dict[str, ParsedDocument] = {}


def parsed(docs: Path, name: str) -> ParsedDocument:
    """Parse each bench PDF once per session (the tests only read the result)."""
    if name not in _CACHE:
        _CACHE[name] = parse_file(docs / "pdf" / name)
    return _CACHE[name]


def blocks(doc: ParsedDocument, kind: str | None = None):
    return [b for s in doc.sections() for b in s.blocks if kind is None or b.kind == kind]


def block_with(doc: ParsedDocument, needle: str, kind: str | None = None):
    found = [b for b in blocks(doc, kind) if needle in b.text]
    assert found, f"no {kind or ''} block contains {needle!r}"
    return found[0]


def section(doc: ParsedDocument, title: str):
    found = [s for s in doc.sections() if s.title == title]
    assert found, f"no section {title!r}; have {[s.title for s in doc.sections()]}"
    return found[0]


@pytest.mark.parametrize(
    "name,pages",
    [
        ("federal-register-2020-17221.pdf", 15),
        ("docling-multi_page.pdf", 5),
        ("faa-amt-handbook-sample.pdf", 1),
        ("nics-background-checks-2015-11.pdf", 1),
        ("senate-expenditures.pdf", 1),
    ],
)
def test_page_count_identity_and_page_on_every_block(docs, sources, name, pages):
    doc = parsed(docs, name)
    assert doc.pages == pages
    assert doc.mime == "application/pdf"
    assert doc.sha256 == sources[f"pdf/{name}"]["sha256"]
    assert doc.bytes == sources[f"pdf/{name}"]["bytes"]
    assert blocks(doc)
    assert all(b.page is not None and 1 <= b.page <= pages for b in blocks(doc))


def test_offsets_point_into_document_text(docs):
    doc = parsed(docs, "federal-register-2020-17221.pdf")
    text = doc.text()
    for b in blocks(doc):
        assert text[b.offset : b.offset + len(b.text)] == b.text


def test_headings_from_fonts_with_levels(docs):
    doc = parsed(docs, "docling-multi_page.pdf")
    assert doc.metadata["headings_from"] == "fonts"
    birth = section(doc, "The Birth of Word Processing (1960s - 1970s)")
    assert (birth.level, birth.page) == (1, 1)
    future = section(doc, "Future of Word Processing")
    assert (future.level, future.page) == (1, 2)
    assert any("Magnetic Tape/Selectric Typewriter" in b.text for b in birth.blocks)
    assert doc.title == "The Evolution of the Word Processor"


def test_text_is_attributed_to_its_page(docs):
    doc = parsed(docs, "docling-multi_page.pdf")
    assert block_with(doc, "WordStar (1978)").page == 1
    assert block_with(doc, "Microsoft Office Suite").page == 2
    assert block_with(doc, "Tools like LaTeX gained popularity").page == 3
    fr = parsed(docs, "federal-register-2020-17221.pdf")
    assert block_with(fr, "Lion Air Flight 610) was involved in an accident").page == 1
    assert section(fr, "Costs of Compliance").page == 5


def test_two_column_page_reads_down_each_column(docs):
    doc = parsed(docs, "faa-amt-handbook-sample.pdf")
    order = [b.text for b in blocks(doc)]

    def pos(needle: str) -> int:
        return next(i for i, t in enumerate(order) if needle in t)

    # left column top to bottom, then the right column (naive y-sorting would interleave them)
    assert pos("pulleys, provided the inner race") < pos("The two general types of self-locking")
    assert pos("Boots self-locking nuts are made with") < pos("the most common ranges in size")
    assert pos("the most common ranges in size") < pos("The elastic stop nut is a standard nut")


def test_three_column_federal_register_page(docs):
    doc = parsed(docs, "federal-register-2020-17221.pdf")
    order = [b.text for b in blocks(doc) if b.page == 3]

    def pos(needle: str) -> int:
        return next(i for i, t in enumerate(order) if needle in t)

    assert pos("The FAA proposes mandating the following") < pos("command to move the horizontal")
    assert pos("command to move the horizontal") < pos("Also, as a result of the installation")


def test_running_heads_and_margin_stamps_are_removed(docs):
    doc = parsed(docs, "federal-register-2020-17221.pdf")
    assert "VerDate" not in doc.text()
    assert "Federal Register / Vol. 85" not in doc.text()
    assert int(doc.metadata["running_heads_removed"]) >= 14


def test_figure_captions_of_faa_handbook(docs):
    doc = parsed(docs, "faa-amt-handbook-sample.pdf")
    figures = blocks(doc, "figure")
    captions = [f.text.split("\n")[0] for f in figures]
    assert "Figure 7-26. Self-locking nuts." in captions
    assert "Figure 7-27. Stainless steel self-locking nut." in captions
    assert all(f.page == 1 for f in figures)
    fig27 = block_with(doc, "Figure 7-27", "figure")
    assert "Locking shoulder" in fig27.text  # callout printed inside that figure
    assert not any("Locking shoulder" in b.text for b in blocks(doc, "text"))
    assert doc.title == "AMT General Handbook"


def test_tables_are_markdown_blocks_and_removed_from_text(docs):
    nics = parsed(docs, "nics-background-checks-2015-11.pdf")
    table = block_with(nics, "Alabama", "table")
    assert table.text.startswith("| ") and "\n|---|" in table.text
    assert "18,870" in table.text
    assert not any("Alabama" in b.text for b in blocks(nics, "text"))
    senate = parsed(docs, "senate-expenditures.pdf")  # a rotated (landscape) page
    assert "CITIBANK - TRAVEL CBA CARD" in block_with(senate, "PAYEE NAME", "table").text
    fr = parsed(docs, "federal-register-2020-17221.pdf")
    cost = block_with(fr, "Labor cost", "table")
    assert cost.page == 5 and "AFM revisions" in cost.text


def test_table_ruled_every_five_states_has_one_row_per_state(docs):
    nics = parsed(docs, "nics-background-checks-2015-11.pdf")
    rows = block_with(nics, "Alabama", "table").text.splitlines()
    states = [r.split("|")[1].strip() for r in rows[3:]]
    assert states[:5] == ["Alabama", "Alaska", "Arizona", "Arkansas", "California"]
    texas = next(r for r in rows if r.startswith("| Texas |"))
    assert texas.startswith("| Texas | 21,550 | 56,941 |") and "<br>" not in texas
    assert len({r.count("|") for r in rows[1:]}) == 1  # every row has every column


def test_links_are_collected(docs):
    doc = parsed(docs, "federal-register-2020-17221.pdf")
    assert "https://www.myboeingfleet.com" in doc.links
    assert "https://www.regulations.gov" in doc.links
    assert len(doc.links) == len(set(doc.links))


def test_each_bench_pdf_parses_fast(docs):
    # generous bound: the machine is shared; measured 0.1-2 s per file when idle
    for name in ("federal-register-2020-17221.pdf", "nics-background-checks-2015-11.pdf"):
        started = time.perf_counter()
        parse_file(docs / "pdf" / name)
        assert time.perf_counter() - started < 20


def _text_pdf(path: Path, pages: list[list[tuple[str, float]]], toc=None, **save) -> Path:
    doc = pymupdf.open()
    for lines in pages:
        page = doc.new_page()
        y = 72
        for text, size in lines:
            page.insert_text((72, y), text, fontsize=size)
            y += size * 2
    if toc:
        doc.set_toc(toc)
    doc.save(path, **save)
    return path


def test_sections_from_outline(tmp_path):
    path = _text_pdf(
        tmp_path / "outlined.pdf",
        [
            [("Introduction", 12), ("This document starts here.", 11)],
            [
                ("Method details", 12),
                ("We measure twice.", 11),
                ("Sub part", 12),
                ("Cut once.", 11),
            ],
        ],
        toc=[[1, "Introduction", 1], [1, "Method details", 2], [2, "Sub part", 2]],
    )
    doc = parse_file(path)
    assert doc.metadata["headings_from"] == "outline"
    intro = section(doc, "Introduction")
    method = section(doc, "Method details")
    sub = section(doc, "Sub part")
    assert (intro.level, intro.page, method.level, method.page) == (1, 1, 1, 2)
    assert sub in method.children and sub.level == 2
    assert [b.text for b in sub.blocks] == ["Cut once."]
    assert [b.page for b in method.blocks] == [2]


def test_encrypted_pdf(tmp_path):
    path = _text_pdf(
        tmp_path / "secret.pdf",
        [[("Top secret text", 11)]],
        encryption=pymupdf.PDF_ENCRYPT_AES_256,
        user_pw="user",
        owner_pw="owner",
    )
    with pytest.raises(EncryptedDocument) as err:
        parse_file(path)
    assert err.value.hint


def test_truncated_pdf(tmp_path, docs):
    data = (docs / "pdf" / "federal-register-2020-17221.pdf").read_bytes()
    cut = tmp_path / "cut.pdf"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(CorruptDocument, match="truncated") as err:
        parse_file(cut)
    assert "again" in err.value.hint


def test_garbage_after_pdf_header(tmp_path):
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 40 + b"\n%%EOF\n")
    with pytest.raises(CorruptDocument):
        parse_file(bad)


def test_not_a_pdf(tmp_path):
    bad = tmp_path / "notes.pdf"
    bad.write_text("just some text, not a PDF")
    with pytest.raises(CorruptDocument, match="no %PDF header"):
        parse_file(bad)


def test_image_only_pdf_needs_ocr(tmp_path):
    doc = pymupdf.open()
    page = doc.new_page()
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 64, 64), 0)
    pix.set_rect(pix.irect, (200, 30, 30))
    page.insert_image(pymupdf.Rect(72, 72, 400, 400), pixmap=pix)
    path = tmp_path / "scan.pdf"
    doc.save(path)
    with pytest.raises(NeedsOCR, match="no text layer") as err:
        parse_file(path)
    assert "OCR is not enabled" in err.value.hint


def test_missing_pymupdf_names_the_extra(monkeypatch, docs):
    from kg_platform.parsing import pdf as pdf_module

    pdf_module._pymupdf.cache_clear()
    monkeypatch.setitem(sys.modules, "pymupdf", None)  # makes "import pymupdf" fail
    try:
        with pytest.raises(UnsupportedFormat) as err:
            parse_file(docs / "pdf" / "faa-amt-handbook-sample.pdf")
        assert err.value.hint == "pip install -e '.[pdf]' in the kg-platform repository"
    finally:
        pdf_module._pymupdf.cache_clear()


def test_all_bold_document_takes_headings_from_size_only(tmp_path):
    doc = pymupdf.open()
    page = doc.new_page()
    y = 72
    for text, size in [
        ("Agenda", 20),
        ("Open the meeting", 11),
        ("Review the numbers", 11),
        ("Plan next quarter", 11),
        ("Close", 11),
    ]:
        page.insert_text((72, y), text, fontsize=size, fontname="hebo")  # Helvetica-Bold
        y += 40
    path = tmp_path / "slides.pdf"
    doc.save(path)
    parsed_doc = parse_file(path)
    assert [(s.title, s.level) for s in parsed_doc.sections()[1:]] == [("Agenda", 1)]
    assert len(parsed_doc.sections()[1].blocks) == 4


# -- headings from size, weight and numbering; clean text ------------------------------------------
BODY = (
    "The nut is made of one piece and holds tight despite severe vibration. The spring keeps "
    "the locking and load carrying sections apart so the threads stay engaged under load."
)


def _html_pdf(path: Path, html: str) -> Path:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_htmlbox(pymupdf.Rect(72, 72, 420, 780), html)
    doc.save(path)
    return path


def test_run_in_italic_heading_on_its_own_line_is_split_from_its_paragraph(tmp_path):
    path = _html_pdf(
        tmp_path / "runin.pdf",
        f"<p>{BODY}</p><p><i>Boots Self-Locking Nut</i><br>{BODY}</p>"
        f"<p><b>Elastic Stop Nut</b><br>{BODY}</p>",
    )
    doc = parse_file(path)
    titles = [s.title for s in doc.sections()[1:]]
    assert titles == ["Boots Self-Locking Nut", "Elastic Stop Nut"]
    assert doc.sections()[1].blocks[0].text.startswith("The nut is made of one piece")


def test_numbered_heading_slightly_larger_than_the_body_is_a_heading(tmp_path):
    path = _html_pdf(
        tmp_path / "numbered.pdf",
        "".join(
            f'<p style="font-size:12.5px">({n}) Part {n} of the review</p>'
            f'<p style="font-size:11.5px">{BODY}</p>'
            for n in (1, 2, 3)
        ),
    )
    doc = parse_file(path)
    assert [s.title for s in doc.sections()[1:]] == [
        f"({n}) Part {n} of the review" for n in (1, 2, 3)
    ]


def test_three_bold_lines_in_a_row_are_not_headings(tmp_path):
    path = _html_pdf(
        tmp_path / "cover.pdf",
        f"<p>{BODY}</p><p><b>Jim Bainbridge</b></p><p><b>Rob Bestgen</b></p>"
        f"<p><b>Mike Cain</b></p><p>{BODY}</p><p><b>Authors</b></p>" + f"<p>{BODY}</p>" * 6,
    )
    doc = parse_file(path)
    assert [s.title for s in doc.sections()[1:]] == ["Authors"]
    assert "Rob Bestgen" in doc.text()


def test_ligatures_expanded_and_line_end_hyphens_joined(tmp_path):
    doc = pymupdf.open()
    page = doc.new_page()
    lines = [
        "The first of the appoint-",
        "ments was kept by the self-",
        "locking crew; a self-locking nut",
        "holds. Every office agreed.",
    ]
    for k, line in enumerate(lines):
        page.insert_text((72, 100 + 14 * k), line, fontsize=11)
    page.insert_htmlbox(pymupdf.Rect(72, 300, 400, 400), "<p>The \ufb01rst o\ufb03ce</p>")
    doc.save(tmp_path / "hyph.pdf")
    text = parse_file(tmp_path / "hyph.pdf").text()
    assert "first of the appointments was kept" in text  # a word ending: joined
    assert "by the self-locking crew" in text  # written with its hyphen elsewhere: kept
    assert "The first office" in text and "\ufb01" not in text


def _placed_pdf(path: Path, texts: list[tuple[float, float, str]], rects=()) -> Path:
    """One page with each text at (x, y) in Helvetica 10, and rectangles drawn as rules."""
    doc = pymupdf.open()
    page = doc.new_page()
    for x, y, text in texts:
        page.insert_text((x, y), text, fontsize=10)
    for r in rects:
        page.draw_rect(pymupdf.Rect(*r), color=(0, 0, 0), width=0.8)
    doc.save(path)
    return path


def test_table_of_contents_with_dot_leaders_is_a_two_column_table(tmp_path):
    entries = [
        "Notices",
        "1.1 Security fundamentals",
        "1.2 Current state of security",
        "2 Roles and separation of duties",
    ]
    texts = [(72, 72, "Contents")]
    y = 100
    for k, title in enumerate(entries):
        texts.append((72, y, f"{title} " + ". " * 20 + str(k + 3)))
        y += 14
    texts.append((72, y, "3.4 Establishing and controlling accessibility by using the"))
    texts.append((72, y + 14, "rule text " + ". " * 20 + "21"))
    doc = parse_file(_placed_pdf(tmp_path / "toc.pdf", texts))
    table = block_with(doc, "Notices", "table")
    rows = table.text.splitlines()
    assert rows[0] == "| Notices | 3 |"
    assert "| 1.2 Current state of security | 5 |" in rows
    assert (
        rows[-1] == "| 3.4 Establishing and controlling accessibility by using the rule text | 21 |"
    )
    assert not any(". . ." in b.text for b in blocks(doc))


def test_table_without_ruling_lines_from_aligned_columns(tmp_path):
    rows = [
        ("State", "Permits", "Handgun"),
        ("Alabama", "18,870", "23,022"),
        ("Alaska", "209", "3,062"),
        ("Texas", "21,550", "56,941"),
    ]
    texts = [(72, 72, BODY[:90])]
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            texts.append((72 + 150 * c, 110 + 14 * r, cell))
    texts.append((72, 200, BODY[:90]))
    doc = parse_file(_placed_pdf(tmp_path / "borderless.pdf", texts))
    table = block_with(doc, "Alabama", "table").text.splitlines()
    assert table[0] == "| State | Permits | Handgun |"
    assert "| Texas | 21,550 | 56,941 |" in table
    assert not any("Alabama" in b.text for b in blocks(doc, "text"))
    assert any(b.text.startswith(BODY[:40]) for b in blocks(doc, "text"))


def test_prose_in_two_columns_is_not_a_table(tmp_path):
    words = BODY.split()
    texts = []
    for k in range(12):
        left = " ".join(words[(k * 7) % 40 : (k * 7) % 40 + 7])
        right = " ".join(words[(k * 5) % 40 : (k * 5) % 40 + 7])
        texts += [(72, 72 + 13 * k, left), (320, 72 + 13 * k, right)]
    doc = parse_file(_placed_pdf(tmp_path / "columns.pdf", texts))
    assert not blocks(doc, "table")


def test_ruled_boxes_of_a_diagram_are_not_a_table(tmp_path):
    boxes = [(72, 72, 250, 120), (72, 120, 250, 168), (250, 72, 430, 120), (250, 120, 430, 168)]
    texts = [(80, 100, "Signed on as ALICE"), (260, 150, "CALL proc1")]
    doc = parse_file(_placed_pdf(tmp_path / "diagram.pdf", texts, rects=boxes))
    assert not blocks(doc, "table")
    assert block_with(doc, "CALL proc1", "text")


def test_right_to_left_words_in_logical_order_and_lam_alef_repaired():
    from kg_platform.parsing.pdf_layout import clean_text
    from kg_platform.parsing.pdf_tables import _line_words

    # words of one table line as PyMuPDF gives them: boxes left to right on the page
    words = [(10, 0, 40, 10, "1403/09/19"), (50, 0, 80, 10, "تاريخ"), (90, 0, 120, 10, "ارائه")]
    assert _line_words(words) == "ارائه تاريخ 1403/09/19"
    digits = [(10, 0, 20, 10, "1403"), (22, 0, 25, 10, "/"), (27, 0, 35, 10, "09")]
    assert _line_words(digits + [(50, 0, 80, 10, "تاريخ")]) == "تاريخ 1403 / 09"
    assert _line_words([(50, 0, 80, 10, "page"), (10, 0, 40, 10, "Total")]) == "Total page"
    # the lam-alef ligature mapped as "alef, lam" after an alef
    assert clean_text("شرکت بورس کاالی ايران") == "شرکت بورس کالای ايران"
    assert clean_text("من األ هداف") == "من الأ هداف"
    assert clean_text("إلى الحكومة") == "إلى الحكومة"  # a real alef-lam stays
    assert clean_text("ﬁnal") == "final"


def test_right_to_left_form_headings_found_when_the_body_sits_in_tables(docs_parsing):
    doc = parse_file(docs_parsing / "pdf" / "right_to_left_03.pdf")
    titles = [s.title for s in doc.sections()[1:]]
    assert "3 - پذيرش در بورس" in titles
    table = block_with(doc, "تاريخ ارائه مدارک", "table")
    assert "| تاريخ ارائه مدارک |" in table.text


def _chars(*glyphs: tuple[str, float, float]) -> list[dict]:
    return [{"c": c, "bbox": (x0, 0.0, x1, 10.0)} for c, x0, x1 in glyphs]


def test_right_to_left_line_read_by_position_not_stream_order():
    from kg_platform.parsing.pdf_layout import rtl_line_text

    # right_to_left_02.pdf: the stream puts the line's final comma (drawn at its left end) and
    # a justification space before the last two letters: "الأولويو ،خت" for "الأولويوخت،"
    stream = _chars(
        ("و", 86, 92), ("ي", 82, 88), ("و", 80, 86), (" ", 60, 64), ("،", 68, 72),
        ("خ", 78, 84), ("ت", 72, 78),
    )  # fmt: skip
    assert rtl_line_text(stream) == "ويوخت، "
    # a number inside the line reads left to right; a space whose box covers the word before
    # it still ends that word
    mixed = _chars(
        ("ف", 90, 100), (" ", 86, 90), ("2", 70, 74), ("0", 74, 78), ("2", 78, 82), ("4", 82, 86),
        (" ", 56, 86), ("ي", 50, 56), ("ل", 44, 50),
    )  # fmt: skip
    assert rtl_line_text(mixed) == "ف 2024 يل"
    # a combining mark stays after its letter whatever its box says
    assert rtl_line_text(_chars(("ب", 20, 30), ("\u064e", 28, 40), ("ا", 10, 20))) == "بَا"


def test_right_to_left_pdf_words_keep_their_letters(docs_parsing):
    doc = parse_file(docs_parsing / "pdf" / "right_to_left_02.pdf")
    text = "\n".join(b.text for s in doc.sections() for b in s.blocks)
    assert "الأولويوخت،" in text and "الأولويو ،خت" not in text
    assert text.lstrip().startswith("وعليه،")


def test_cover_page_has_one_title_and_its_other_large_lines_stay_text(tmp_path):
    doc = pymupdf.open()
    cover = doc.new_page()
    cover.insert_text((72, 80), "Front cover", fontsize=24, fontname="hebo")
    cover.insert_text((72, 200), "Redpaper", fontsize=60, fontname="hebo")
    cover.insert_text((72, 300), "Access Control in Practice", fontsize=40, fontname="hebo")
    cover.insert_text((72, 400), "Jane Doe", fontsize=12, fontname="hebo")
    body = doc.new_page()
    body.insert_text((72, 72), "1.1 Security basics", fontsize=14, fontname="hebo")
    for k in range(12):
        body.insert_text((72, 100 + 14 * k), BODY[:90], fontsize=10)
    path = tmp_path / "cover.pdf"
    doc.save(path)
    parsed = parse_file(path)
    titles = [s.title for s in parsed.sections()[1:]]
    assert titles == ["Access Control in Practice", "1.1 Security basics"]
    text = "\n".join(b.text for s in parsed.sections() for b in s.blocks)
    assert "Front cover" in text and "Redpaper" in text  # kept as text, not lost
