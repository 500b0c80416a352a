"""How faithfully documents are parsed, against a reference Markdown conversion.

The dataset (``bench/parsing``) holds documents with a reference Markdown each (docling's
ground truth: headings as ``#`` lines, paragraphs, lists, tables as Markdown tables, in reading
order). The reference is read with the platform's own Markdown parser, the document with
:func:`kg_platform.parsing.parse_file`, and both trees are compared with the same code:

- **text recall / precision**: bag of words (lower case, markup stripped), the share of the
  reference's words the parse keeps, and of the parse's words the reference has;
- **heading recall / precision**: section titles (normalised words), matched as a multiset;
- **table cell F1**: every non-empty cell of every table, matched as a multiset; **rows kept
  whole**: the share of reference rows (two or more filled cells) whose cells all sit in one row
  of a parsed table;
- **reading order**: reference blocks located in the parse by their first words; the share of
  them that lie in one increasing run (longest increasing subsequence).

A measure is ``None`` where it is undefined (no table in the reference: no table measure). A
document the parser refuses scores 0 on every defined measure, so a lost file shows in medians.
"""

from __future__ import annotations

import json
import re
import statistics
import time
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kg_platform.parsing.markdown import build_markdown
from kg_platform.parsing.model import Section

MEASURES = (
    "text_recall",
    "text_precision",
    "heading_recall",
    "heading_precision",
    "table_cell_f1",
    "rows_kept_whole",
    "reading_order",
)
FORMATS = ("pdf", "docx", "pptx", "xlsx", "html")

_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_TAG = re.compile(r"</?[A-Za-z][^>]*>")
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_WORD = re.compile(r"\w+", re.UNICODE)
_DELIM = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
ORDER_WORDS = 6  # a block is located in the parse by its first words (at least 4)


# -- text normalisation --------------------------------------------------------------------------
def strip_markup(text: str) -> str:
    """Markdown/HTML markup out, words kept (image alt text and link anchors stay)."""
    text = _COMMENT.sub(" ", text)
    text = text.replace("<br>", " ").replace("<br/>", " ").replace("<br />", " ")
    text = _TAG.sub(" ", text)
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    return text.replace("\\", "")


def words(text: str) -> list[str]:
    """Lower-case word tokens of ``text`` (no Unicode folding: a ligature is a different word)."""
    return [w.lower() for w in _WORD.findall(strip_markup(text)) if w.strip("_")]


def _key(text: str) -> str:
    return " ".join(words(text))


# -- a parsed tree, flattened ----------------------------------------------------------------------
@dataclass
class Flat:
    """What the measures need from a section tree."""

    headings: list[str] = field(default_factory=list)  # normalised section titles
    tokens: list[str] = field(default_factory=list)  # every word, in document order
    tables: list[list[list[str]]] = field(default_factory=list)  # rows of normalised cells
    units: list[list[str]] = field(default_factory=list)  # headings and blocks, as word lists


def table_rows(markdown: str) -> list[list[str]]:
    """Rows of a Markdown table (delimiter row dropped), each a list of normalised cells."""
    rows: list[list[str]] = []
    for line in markdown.splitlines():
        line = line.strip()
        if not line or _DELIM.match(line):
            continue
        if line.startswith("|"):
            line = line[1:]
        if line.endswith("|") and not line.endswith("\\|"):
            line = line[:-1]
        rows.append([_key(cell) for cell in _CELL_SPLIT.split(line)])
    return rows


def flatten(root: Section) -> Flat:
    flat = Flat()
    for section in root.walk():
        if section.level > 0 and section.title:
            title = words(section.title)
            flat.headings.append(" ".join(title))
            flat.tokens.extend(title)
            flat.units.append(title)
        for block in section.blocks:
            if block.kind == "table" and "|" in block.text:
                rows = table_rows(block.text)
                flat.tables.append(rows)
                toks = [w for row in rows for cell in row for w in cell.split()]
            else:
                toks = words(block.text)
            flat.tokens.extend(toks)
            flat.units.append(toks)
    return flat


def reference_tree(markdown: str) -> Section:
    """The reference Markdown read as a section tree (docling's ``<!-- image -->`` dropped)."""
    return build_markdown(_COMMENT.sub("", markdown)).root


# -- the measures -----------------------------------------------------------------------------------
def _overlap(a: Iterable[str], b: Iterable[str]) -> tuple[int, int, int]:
    ca, cb = Counter(a), Counter(b)
    return sum((ca & cb).values()), sum(ca.values()), sum(cb.values())


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def lis_length(seq: list[int]) -> int:
    """Length of the longest strictly increasing subsequence."""
    tails: list[int] = []
    for x in seq:
        k = bisect_left(tails, x)
        if k == len(tails):
            tails.append(x)
        else:
            tails[k] = x
    return len(tails)


def reading_order(ref: Flat, cand: Flat) -> float | None:
    """Share of the located reference blocks that appear in the parse in reference order.

    A reference block is looked up by its first words at the start of a parsed block first
    (repeated boilerplate such as "Lorem ipsum" also occurs inside paragraphs), else anywhere."""
    starts: dict[tuple[str, ...], list[int]] = {}
    anywhere: dict[tuple[str, ...], list[int]] = {}
    toks = cand.tokens
    pos = 0
    for unit in cand.units:
        for n in range(4, ORDER_WORDS + 1):
            if len(unit) >= n:
                starts.setdefault(tuple(unit[:n]), []).append(pos)
        pos += len(unit)
    for n in range(4, ORDER_WORDS + 1):
        for i in range(len(toks) - n + 1):
            anywhere.setdefault(tuple(toks[i : i + n]), []).append(i)
    positions: list[int] = []
    used: set[int] = set()
    for unit in ref.units:
        if len(unit) < 4:
            continue
        key = tuple(unit[:ORDER_WORDS])
        free = [p for p in starts.get(key, []) if p not in used]
        free = free or [p for p in anywhere.get(key, []) if p not in used]
        if free:
            used.add(free[0])
            positions.append(free[0])
    if len(positions) < 2:
        return None
    return lis_length(positions) / len(positions)


def _row_kept(row: set[str], cand_rows: list[set[str]]) -> bool:
    return any(row <= other for other in cand_rows)


def compare(ref: Flat, cand: Flat) -> dict[str, float | None]:
    """Every measure of one parse against its reference."""
    hit, n_ref, n_cand = _overlap(ref.tokens, cand.tokens)
    out: dict[str, float | None] = {
        "text_recall": _ratio(hit, n_ref),
        "text_precision": _ratio(hit, n_cand),
    }
    hit, n_ref, n_cand = _overlap(ref.headings, cand.headings)
    out["heading_recall"] = _ratio(hit, n_ref)
    out["heading_precision"] = _ratio(hit, n_cand) if n_ref or n_cand else None
    ref_cells = [c for t in ref.tables for row in t for c in row if c]
    cand_cells = [c for t in cand.tables for row in t for c in row if c]
    if ref_cells:
        hit, n_ref, n_cand = _overlap(ref_cells, cand_cells)
        out["table_cell_f1"] = 2 * hit / (n_ref + n_cand) if n_ref + n_cand else 0.0
        ref_rows = [{c for c in row if c} for t in ref.tables for row in t]
        ref_rows = [r for r in ref_rows if len(r) >= 2]
        cand_rows = [{c for c in row if c} for t in cand.tables for row in t]
        kept = sum(1 for r in ref_rows if _row_kept(r, cand_rows))
        out["rows_kept_whole"] = _ratio(kept, len(ref_rows))
    else:
        out["table_cell_f1"] = None
        out["rows_kept_whole"] = None
    out["reading_order"] = reading_order(ref, cand)
    return out


def refused(ref: Flat) -> dict[str, float | None]:
    """The scores of a parse that produced nothing: 0 wherever the measure is defined."""
    defined = compare(ref, ref)  # what the reference defines, whatever the parse
    return {k: (0.0 if v is not None else None) for k, v in defined.items()}


# -- the dataset ------------------------------------------------------------------------------------
@dataclass
class Case:
    format: str
    file: Path
    groundtruth: Path


def load_cases(dataset: Path, formats: Iterable[str] | None = None) -> list[Case]:
    """The dataset's (document, reference) pairs: ``SOURCES.json`` when present, else every
    ``<format>/groundtruth/<file>.md`` whose document sits in ``<format>/``."""
    wanted = {f.lower().lstrip(".") for f in formats} if formats else None
    cases: list[Case] = []
    sources = dataset / "SOURCES.json"
    if sources.is_file():
        for entry in json.loads(sources.read_text(encoding="utf-8")):
            cases.append(
                Case(entry["format"], dataset / entry["file"], dataset / entry["groundtruth"])
            )
    else:
        for gt in sorted(dataset.glob("*/groundtruth/*.md")):
            fmt = gt.parent.parent.name
            cases.append(Case(fmt, gt.parent.parent / gt.name[: -len(".md")], gt))
    cases = [c for c in cases if c.file.is_file() and c.groundtruth.is_file()]
    return [c for c in cases if wanted is None or c.format in wanted]


@dataclass
class DocResult:
    file: str
    format: str
    scores: dict[str, float | None]
    seconds: float
    pages: int | None = None
    error: str | None = None  # "CorruptDocument: ..." when the parser refused the file
    warnings: list[str] = field(default_factory=list)


def evaluate_case(case: Case) -> DocResult:
    from kg_platform.errors import ParseError
    from kg_platform.parsing import parse_file

    ref = flatten(reference_tree(case.groundtruth.read_text(encoding="utf-8")))
    started = time.perf_counter()
    try:
        doc = parse_file(case.file)
    except ParseError as exc:
        return DocResult(
            file=case.file.name,
            format=case.format,
            scores=refused(ref),
            seconds=time.perf_counter() - started,
            error=f"{type(exc).__name__}: {exc}",
        )
    seconds = time.perf_counter() - started
    return DocResult(
        file=case.file.name,
        format=case.format,
        scores=compare(ref, flatten(doc.root)),
        seconds=seconds,
        pages=doc.pages,
        warnings=list(doc.warnings),
    )


def median(values: Iterable[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return statistics.median(kept) if kept else None


@dataclass
class Report:
    dataset: str
    documents: list[DocResult]

    def formats(self) -> list[str]:
        seen = {d.format for d in self.documents}
        return [f for f in FORMATS if f in seen] + sorted(seen - set(FORMATS))

    def medians(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for fmt in self.formats():
            docs = [d for d in self.documents if d.format == fmt]
            row: dict[str, Any] = {"docs": len(docs), "refused": sum(1 for d in docs if d.error)}
            for m in MEASURES:
                row[m] = median(d.scores.get(m) for d in docs)
            if fmt == "pdf":
                paged = [d for d in docs if d.pages and not d.error]
                pages = sum(d.pages or 0 for d in paged)
                row["seconds_per_page"] = sum(d.seconds for d in paged) / pages if pages else None
            out[fmt] = row
        return out

    def worst(self, n: int = 5) -> list[tuple[DocResult, str, float]]:
        """The ``n`` documents whose lowest measure is lowest, with that measure."""
        scored = []
        for d in self.documents:
            defined = [(v, m) for m, v in d.scores.items() if v is not None]
            if defined:
                v, m = min(defined)
                scored.append((d, m, v))
        return sorted(scored, key=lambda t: (t[2], t[0].file))[:n]

    def markdown(self) -> str:
        def cell(v: Any) -> str:
            return "-" if v is None else f"{v:.2f}" if isinstance(v, float) else str(v)

        head = ["format", "docs", "refused", *MEASURES]
        lines = [
            "| " + " | ".join(h.replace("_", " ") for h in head) + " |",
            "|" + "---|" * len(head),
        ]
        for fmt, row in self.medians().items():
            lines.append("| " + " | ".join([fmt] + [cell(row.get(h)) for h in head[1:]]) + " |")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "medians": self.medians(),
            "documents": [asdict(d) for d in self.documents],
        }


def evaluate(dataset: Path, formats: Iterable[str] | None = None) -> Report:
    """Parse every document of ``dataset`` and score it against its reference."""
    cases = load_cases(dataset, formats)
    return Report(dataset=str(dataset), documents=[evaluate_case(c) for c in cases])


__all__ = [
    "MEASURES",
    "Case",
    "DocResult",
    "Flat",
    "Report",
    "compare",
    "evaluate",
    "flatten",
    "load_cases",
    "reference_tree",
    "table_rows",
    "words",
]
