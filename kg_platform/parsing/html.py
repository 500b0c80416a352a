"""HTML: keep the main content, convert it to Markdown with markitdown, then build the tree.

Saved web pages are mostly chrome (menus, sidebars, footers, edit links). Before conversion the
page is cut down to its main content (``<main>``, ``<article>``, ``role=main`` or ``#content``,
else ``<body>``) and navigation elements are removed, so sections and chunks hold the article;
a page that is all navigation (a site map, a list of links) keeps it, as that is its content.
The title comes from ``<title>``; outgoing links are the ``href``s of the kept content.
"""

from __future__ import annotations

import codecs
import re
from urllib.parse import urljoin

from kg_platform.errors import CorruptDocument, EmptyDocument
from kg_platform.parsing._files import RawFile, bom_encoding, check_text_like
from kg_platform.parsing._tables import expand_spans
from kg_platform.parsing.markdown import document_from_markdown
from kg_platform.parsing.model import ParsedDocument
from kg_platform.parsing.text import decode_small

MIME = "text/html"
_META_CHARSET = re.compile(
    rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE
)
_DROP_TAGS = [
    "script",
    "style",
    "noscript",
    "template",
    "nav",
    "aside",
    "footer",
    "form",
    "iframe",
    "svg",
    "button",
    "input",
    "select",
]
_DROP_ROLES = {"navigation", "banner", "contentinfo", "search", "menu"}
_DROP_CLASSES = {
    "mw-editsection",
    "navbox",
    "vector-toc",
    "mw-jump-link",
    "catlinks",
    "printfooter",
    "noprint",
    "sidebar",
}


MIN_CONTENT_WORDS = 20  # below this, and ...
CHROME_SHARE = 0.25  # ... below this share of the page's words, the "chrome" was the content


def _drop_chrome(soup):  # type: ignore[no-untyped-def]
    """The page's main content without menus, sidebars, footers and edit links."""
    for tag in soup(_DROP_TAGS):
        tag.decompose()
    for tag in soup.find_all(role=True):
        if not tag.decomposed and str(tag.get("role")) in _DROP_ROLES:
            tag.decompose()
    for tag in soup.find_all(class_=True):
        if not tag.decomposed and _DROP_CLASSES.intersection(tag.get("class") or []):
            tag.decompose()
    for tag in soup.find_all("header"):  # site headers go; an article header with its h1 stays
        if not tag.decomposed and tag.find("h1") is None:
            tag.decompose()
    return _main_content(soup)


def _main_content(soup):  # type: ignore[no-untyped-def]
    return (
        soup.find("main")
        or soup.find("article")
        or soup.find(attrs={"role": "main"})
        or soup.find(id="content")
        or soup.body
        or soup
    )


def html_to_document(
    html: str | bytes,
    *,
    raw: RawFile,
    mime: str = MIME,
    title: str | None = None,
    warnings: list[str] | None = None,
    metadata: dict[str, str] | None = None,
) -> ParsedDocument:
    """Convert an HTML string/bytes to a :class:`ParsedDocument` (also used for HTML e-mail)."""
    from bs4 import BeautifulSoup
    from markitdown.converters import HtmlConverter

    soup = BeautifulSoup(html, "html.parser")
    page_title = soup.title.get_text(" ", strip=True) if soup.title else ""
    base_tag = soup.find("base", href=True)
    base = str(base_tag["href"]) if base_tag else ""
    for tag in soup(_DROP_TAGS[:4]):  # script, style, noscript, template: never content
        tag.decompose()
    whole = len((soup.body or soup).get_text(" ").split())
    main = _drop_chrome(BeautifulSoup(str(soup), "html.parser"))
    kept = len(main.get_text(" ").split())
    if kept < MIN_CONTENT_WORDS and kept < CHROME_SHARE * whole:
        main = _main_content(soup)  # the page is its menu (a site map, a link list): keep it
    links: list[str] = []
    seen: set[str] = set()
    for a in main.find_all("a", href=True):
        href = str(a["href"]).strip()
        if not href or href.startswith("#") or href.lower().startswith("javascript:"):
            continue
        href = urljoin(base, href) if base else href
        if href not in seen:
            seen.add(href)
            links.append(href)
    expand_spans(main)  # merged cells repeated where they span: rows keep their columns
    body = str(main)
    try:
        # strip=["a", "img"]: keep anchor text, drop link targets and images from the prose
        markdown = HtmlConverter().convert_string(body, strip=["a", "img"]).markdown or ""
    except Exception as exc:  # noqa: BLE001 - whatever the converter raises, the file is unusable
        raise CorruptDocument(
            f"{raw.path}: the HTML could not be converted ({exc})",
            hint="check that the file is HTML; save the page again",
        ) from None
    if not markdown.strip():
        raise EmptyDocument(
            f"{raw.path}: the HTML page has no text content",
            hint="the page may be rendered by JavaScript; save the rendered page",
        )
    return document_from_markdown(
        markdown,
        raw=raw,
        mime=mime,
        title=title or page_title or None,
        links=links,
        warnings=warnings,
        metadata=metadata,
    )


def _declared_charset(head: bytes) -> str | None:
    """The ``<meta charset>`` / ``http-equiv`` charset of the page, if it names a known codec."""
    m = _META_CHARSET.search(head[:8192])
    if not m:
        return None
    try:
        return codecs.lookup(m.group(1).decode("ascii", "ignore")).name
    except LookupError:
        return None


def parse_html(raw: RawFile) -> ParsedDocument:
    """Parse an ``.html``/``.htm`` file. Encoding: BOM, else ``<meta charset>``, else detected;
    invalid bytes are replaced and counted in ``warnings`` like for plain text."""
    check_text_like(raw, "HTML")
    encoding = bom_encoding(raw.head) or _declared_charset(raw.head)
    text, warnings = decode_small(raw, encoding)
    return html_to_document(text, raw=raw, warnings=warnings, metadata={"converter": "markitdown"})


__all__ = ["html_to_document", "parse_html"]
