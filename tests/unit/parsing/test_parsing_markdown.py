"""Markdown: heading tree (ATX + setext), tables, fenced code, lists, figures, links."""

from __future__ import annotations

from kg_platform.parsing import ParsedDocument, parse_file
from kg_platform.parsing.markdown import build_markdown


def section(doc: ParsedDocument, title: str):
    found = [s for s in doc.sections() if s.title == title]
    assert found, f"no section {title!r}; have {[s.title for s in doc.sections()]}"
    return found[0]


def test_pdfplumber_readme_tree(docs, sources):
    doc = parse_file(docs / "md" / "pdfplumber-README.md")
    assert doc.title == "pdfplumber"
    assert doc.sha256 == sources["md/pdfplumber-README.md"]["sha256"]
    top = section(doc, "pdfplumber")
    assert top.level == 1
    library = section(doc, "Python library")
    assert library.level == 2 and library in top.children
    loading = section(doc, "Loading a PDF")
    assert loading.level == 3 and loading in library.children
    char = section(doc, "`char` properties")
    assert char.level == 4 and char in section(doc, "Objects").children
    kinds = [b.kind for s in doc.sections() for b in s.blocks]
    assert kinds.count("table") >= 8 and kinds.count("code") >= 8
    assert any(
        "| `page_number` |" in b.text or "page_number" in b.text
        for b in section(doc, "The `pdfplumber.Page` class").blocks
        if b.kind == "table"
    )
    assert "https://pypi.python.org/pypi/pdfplumber" in doc.links


def test_markitdown_readme_code_inside_list_is_not_a_heading(docs):
    doc = parse_file(docs / "md" / "markitdown-README.md")
    titles = [s.title for s in doc.sections()]
    assert "Reopen the project in Devcontainer and run:" not in titles
    assert [s.title for s in doc.sections() if s.level == 1] == ["MarkItDown"]
    assert section(doc, "Command-Line") in section(doc, "Usage").children
    tests = section(doc, "Running Tests and Checks")
    assert any("# Reopen the project" in b.text for b in tests.blocks if b.kind == "list")


def test_ibm_wiki_markdown(docs):
    doc = parse_file(docs / "md" / "docling-wiki-ibm.md")
    assert doc.title == "IBM"
    assert section(doc, "1910s–1950s").level == 2


def test_synthetic_markdown_constructs():
    text = """---
title: front
---
Intro paragraph with a [link](https://ex.org/a "t") and <https://ex.org/b>.

Big Title
=========

Sub title
---------

```python
# not a heading
print("x")
```

- item one
  continued line

- item two
- [ref link][r]

| a | b |
|---|:-:|
| 1 | 2 |

![duck photo](img/duck.png)

Figure 3: A duck.

### Deep *emphasis* heading ###

[r]: https://ex.org/ref
"""
    result = build_markdown(text)
    root = result.root
    assert result.front_matter == "title: front\n"
    assert root.blocks[0].text.startswith("Intro paragraph")
    big = root.children[0]
    assert (big.title, big.level) == ("Big Title", 1)
    sub = big.children[0]
    assert (sub.title, sub.level) == ("Sub title", 2)
    kinds = [b.kind for b in sub.blocks]
    assert kinds == ["code", "list", "table", "figure"]
    code, lst, table, figure = sub.blocks
    assert "# not a heading" in code.text and code.text.startswith("```python")
    assert "item one\n  continued line" in lst.text and "item two" in lst.text
    assert table.text.splitlines()[2] == "| 1 | 2 |"
    assert figure.text == "Figure 3: A duck.\nduck photo"
    deep = sub.children[0]
    assert (deep.title, deep.level) == ("Deep emphasis heading", 3)
    assert result.links == ["https://ex.org/ref", "https://ex.org/a", "https://ex.org/b"]


def test_offsets_match_document_text(docs):
    doc = parse_file(docs / "md" / "markitdown-README.md")
    text = doc.text()
    for s in doc.sections():
        for b in s.blocks:
            assert text[b.offset : b.offset + len(b.text)] == b.text


def test_plain_links_keep_anchor_text_and_collect_targets():
    result = build_markdown(
        "See [the docs](https://ex.org/docs) and ![logo](logo.png) here.\n\n"
        "```\n[keep](https://ex.org/code)\n```\n",
        plain_links=True,
    )
    text, code = result.root.blocks
    assert text.text == "See the docs and logo here."
    assert code.text == "```\n[keep](https://ex.org/code)\n```"  # code is never rewritten
    assert result.links == ["https://ex.org/docs"]
