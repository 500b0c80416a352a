"""Training and benchmark data for the SAGE segmenter, built from real paragraph-structured text.

Sources (all read offline from ``bench/``; only model weights trained on them are shipped, never
the text; licences in ``bench/README.md`` and ``documents/SOURCES.json``):

* ``dev/corpus/{hotpotqa,2wikimultihopqa,musique}.jsonl`` — Wikipedia paragraphs; MuSiQue keeps a
  paragraph as one string, so it is split into sentences here.
* ``dev/corpus/pubmedqa.jsonl`` — each stored "sentence" is an abstract section (PURPOSE, METHODS,
  ...), so every section is a paragraph and one abstract is one article: this gives real
  in-article paragraph boundaries.
* ``documents/html`` and ``documents/md`` — prose blocks of real web pages and READMEs
  (converted to Markdown with markitdown; headings, lists, tables and code are skipped).

The split is by QA question (seeded hash), so a held-out benchmark document is the candidate
paragraphs of one question — related topics, the hard case for a segmenter — and no paragraph or
article of it is seen in training. Labels (SAGE paper, Algorithm 1): 1 for two consecutive sentences
inside one paragraph; 0 for the boundary pair (last sentence of paragraph i, first of i + 1 in the
same article) and for cross-article pairs, balanced 1:1 with the positives. Everything is
deterministic for a given seed.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from kg_platform.errors import EvaluationError

if TYPE_CHECKING:
    from kg_platform.embedding import Embedder

log = logging.getLogger(__name__)

__all__ = [
    "Paragraph",
    "Pair",
    "SegDocument",
    "SageData",
    "build_documents",
    "build_pairs",
    "load_sage_data",
    "split_sentences",
]

QA_DATASETS = ("hotpotqa", "2wikimultihopqa", "musique")
SPLITS = ("train", "val", "test")

# --------------------------------------------------------------------------- sentences

_ABBREV = {
    "mr",
    "mrs",
    "ms",
    "dr",
    "prof",
    "sr",
    "jr",
    "st",
    "mt",
    "vs",
    "etc",
    "e.g",
    "i.e",
    "no",
    "fig",
    "figs",
    "al",
    "inc",
    "ltd",
    "co",
    "corp",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
    "gen",
    "col",
    "lt",
    "sgt",
    "capt",
    "rev",
    "u.s",
    "approx",
    "dept",
    "est",
    "vol",
    "ca",
    "cf",
    "op",
    "pp",
}
_CANDIDATE = re.compile(r"[.!?][\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")


def split_sentences(text: str) -> list[str]:
    """A small rule-based sentence splitter (no model, no download).

    Cuts after ``.``, ``!`` or ``?`` followed by space and an upper-case letter or digit, except
    after common abbreviations and single-letter initials ("J. R. R. Tolkien").
    """
    text = " ".join(text.split())
    if not text:
        return []
    out: list[str] = []
    start = 0
    for m in _CANDIDATE.finditer(text):
        end = m.start() + 1
        before = text[start:end].rstrip(".!?\"')]")
        last = before.rsplit(" ", 1)[-1].lower()
        if text[m.start()] == "." and (last in _ABBREV or (len(last) == 1 and last.isalpha())):
            continue
        piece = text[start : m.end()].strip()
        if piece:
            out.append(piece)
        start = m.end()
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return out


# --------------------------------------------------------------------------- paragraphs


@dataclass(frozen=True)
class Paragraph:
    """One paragraph: ``article`` groups paragraphs of one text, ``ord`` orders them inside it."""

    key: str
    article: str
    ord: int
    sentences: tuple[str, ...]
    origin: str


@dataclass(frozen=True)
class Pair:
    s1: str
    s2: str
    label: int
    kind: str  # "inside", "boundary" (same article), "cross" (other article)


@dataclass(frozen=True)
class SegDocument:
    """A benchmark document: sentences and the true segment sizes (sum = len(sentences))."""

    name: str
    sentences: tuple[str, ...]
    sizes: tuple[int, ...]


@dataclass
class SageData:
    paragraphs: dict[str, list[Paragraph]]  # split -> paragraphs
    documents: dict[str, list[SegDocument]]  # "val"/"test" -> held-out benchmark documents


def _bucket(key: str, seed: int, val: float, test: float) -> str:
    h = int(hashlib.sha256(f"{seed}:{key}".encode()).hexdigest()[:12], 16) / float(1 << 48)
    return "test" if h < test else "val" if h < test + val else "train"


def _clean(sentences: Iterable[str]) -> tuple[str, ...]:
    out: list[str] = []
    for s in sentences:
        out.extend(split_sentences(s))
    return tuple(s for s in out if len(s) > 1)


def _read_jsonl(path: Path) -> Iterator[dict]:
    try:
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    yield json.loads(line)
    except (OSError, json.JSONDecodeError) as exc:
        raise EvaluationError(
            f"cannot read {path}: {exc}",
            hint="point --bench at the bench/ folder holding dev/corpus",
        ) from exc


def _corpus_paragraphs(dev: Path, dataset: str) -> dict[str, Paragraph]:
    paragraphs: dict[str, Paragraph] = {}
    for row in _read_jsonl(dev / "corpus" / f"{dataset}.jsonl"):
        sentences = _clean(row["sentences"])
        if sentences:
            paragraphs[row["doc_id"]] = Paragraph(
                row["doc_id"], f"{dataset}:{row['title']}", 0, sentences, dataset
            )
    return paragraphs


def _pubmed_paragraphs(dev: Path) -> list[Paragraph]:
    out: list[Paragraph] = []
    path = dev / "corpus" / "pubmedqa.jsonl"
    if not path.exists():
        return out
    for row in _read_jsonl(path):
        for i, section in enumerate(row["sentences"]):
            sentences = _clean([section])
            if sentences:
                out.append(
                    Paragraph(f"{row['doc_id']}#{i}", row["doc_id"], i, sentences, "pubmedqa")
                )
    return out


_NON_PROSE = re.compile(r"^\s*(#|\||[-*+] |\d+[.)] |>|```|!\[|<|\[!\[)")


def _markdown_paragraphs(markdown: str, article: str, origin: str) -> list[Paragraph]:
    """Prose blocks of a Markdown text (blank-line separated), links reduced to their text."""
    out: list[Paragraph] = []
    in_code = False
    for block in re.split(r"\n\s*\n", markdown):
        if block.lstrip().startswith("```"):
            in_code = block.count("```") % 2 == 1 and not in_code
            continue
        if in_code or _NON_PROSE.match(block):
            continue
        text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", block)
        text = re.sub(r"\[\d+\]|[*_`]", "", text)
        sentences = _clean([text])
        words = sum(len(s.split()) for s in sentences)
        if sentences and words >= 12:
            out.append(Paragraph(f"{article}#{len(out)}", article, len(out), sentences, origin))
    return out


def _document_paragraphs(documents: Path) -> list[Paragraph]:
    out: list[Paragraph] = []
    for path in sorted((documents / "md").glob("*.md")) if (documents / "md").exists() else []:
        out += _markdown_paragraphs(
            path.read_text(encoding="utf-8", errors="replace"), f"doc:{path.name}", "documents"
        )
    html_dir = documents / "html"
    if html_dir.exists():
        from markitdown import MarkItDown

        converter = MarkItDown()
        for path in sorted(html_dir.glob("*.html")):
            markdown = converter.convert(str(path)).text_content
            out += _markdown_paragraphs(markdown, f"doc:{path.name}", "documents")
    return out


def _question_groups(dev: Path, dataset: str, max_paragraphs: int) -> list[tuple[str, list[str]]]:
    groups = []
    for row in _read_jsonl(dev / f"{dataset}.jsonl"):
        ids = list(dict.fromkeys(p["doc_id"] for p in row["paragraphs"]))[:max_paragraphs]
        groups.append((f"{dataset}:{row['id']}", ids))
    return groups


def load_sage_data(
    bench: Path,
    *,
    seed: int = 13,
    val: float = 0.15,
    test: float = 0.2,
    max_doc_paragraphs: int = 10,
    include_documents: bool = True,
) -> SageData:
    """Paragraphs per split and held-out benchmark documents, deterministic for ``seed``.

    QA questions are hashed into train/val/test; a val/test document is the (first
    ``max_doc_paragraphs``) candidate paragraphs of one question, concatenated. Training uses
    every paragraph not in a val/test document and whose article title is not held out either.
    PubMed abstracts and the real documents are split by article the same way; a held-out
    abstract's sections form one document, grouped by 4 abstracts so a document has segments
    from both inside an article and across articles.
    """
    dev = Path(bench) / "dev"
    if not (dev / "corpus").exists():
        raise EvaluationError(
            f"no dev/corpus under {bench}", hint="pass --bench pointing at the shared bench/ folder"
        )
    paragraphs: dict[str, list[Paragraph]] = {s: [] for s in SPLITS}
    documents: dict[str, list[SegDocument]] = {"val": [], "test": []}
    for dataset in QA_DATASETS:
        if not (dev / f"{dataset}.jsonl").exists():
            continue
        pool = _corpus_paragraphs(dev, dataset)
        held: dict[str, set[str]] = {"val": set(), "test": set()}
        for qkey, ids in _question_groups(dev, dataset, max_doc_paragraphs):
            bucket = _bucket(qkey, seed, val, test)
            if bucket == "train":
                continue
            ids = [i for i in ids if i in pool and not any(i in h for h in held.values())]
            if len(ids) < 3:
                continue
            held[bucket].update(ids)
            documents[bucket].append(_document(qkey, [pool[i] for i in ids]))
        held_articles = {pool[i].article for h in held.values() for i in h}
        for key, p in pool.items():
            if key in held["val"] or key in held["test"]:
                paragraphs["val" if key in held["val"] else "test"].append(p)
            elif p.article not in held_articles:
                paragraphs["train"].append(p)
    extra = _pubmed_paragraphs(dev) + (
        _document_paragraphs(Path(bench) / "documents") if include_documents else []
    )
    by_article: dict[str, list[Paragraph]] = {}
    for p in extra:
        by_article.setdefault(p.article, []).append(p)
    held_groups: dict[str, list[list[Paragraph]]] = {"val": [], "test": []}
    for article in sorted(by_article):
        bucket = _bucket(article, seed, val, test)
        paragraphs[bucket].extend(by_article[article])
        if bucket != "train":
            held_groups[bucket].append(by_article[article])
    for bucket, groups in held_groups.items():
        for start in range(0, len(groups), 4):
            chunk = [p for g in groups[start : start + 4] for p in g]
            if len(chunk) >= 3:
                documents[bucket].append(_document(f"articles:{bucket}:{start // 4}", chunk[:40]))
    return SageData(paragraphs=paragraphs, documents=documents)


def _document(name: str, paras: list[Paragraph]) -> SegDocument:
    sentences = tuple(s for p in paras for s in p.sentences)
    return SegDocument(name, sentences, tuple(len(p.sentences) for p in paras))


def build_documents(
    paragraphs: list[Paragraph], n_docs: int, per_doc: int, *, seed: int = 13
) -> list[SegDocument]:
    """Choi-style documents: ``per_doc`` random paragraphs concatenated (true boundaries known)."""
    rng = random.Random(seed)
    pool = list(paragraphs)
    rng.shuffle(pool)
    return [
        _document(f"choi:{i}", pool[i * per_doc : (i + 1) * per_doc])
        for i in range(min(n_docs, len(pool) // per_doc))
    ]


def build_pairs(
    paragraphs: list[Paragraph],
    *,
    seed: int = 13,
    max_pairs: int | None = None,
    cross_share: float = 0.5,
) -> list[Pair]:
    """Balanced labelled sentence pairs (Algorithm 1 of the SAGE paper, with our negatives).

    Positives: every consecutive sentence pair inside a paragraph. Negatives: every boundary pair
    between consecutive paragraphs of one article, then cross-article pairs (the last sentence of
    one paragraph followed by the first sentence of a paragraph of another article, as a
    boundary looks in a concatenated text) until the classes balance. ``max_pairs`` caps the
    total, keeping the balance.
    """
    rng = random.Random(seed)
    positives = [
        Pair(p.sentences[i], p.sentences[i + 1], 1, "inside")
        for p in paragraphs
        for i in range(len(p.sentences) - 1)
    ]
    by_article: dict[str, list[Paragraph]] = {}
    for p in paragraphs:
        by_article.setdefault(p.article, []).append(p)
    boundary = []
    for paras in by_article.values():
        paras = sorted(paras, key=lambda p: p.ord)
        for a, b in zip(paras, paras[1:]):
            boundary.append(Pair(a.sentences[-1], b.sentences[0], 0, "boundary"))
    if max_pairs is not None:
        rng.shuffle(positives)
        positives = positives[: max_pairs // 2]
    rng.shuffle(boundary)
    boundary = boundary[: int(len(positives) * (1 - cross_share))]
    cross: list[Pair] = []
    n_cross = len(positives) - len(boundary)
    if len(by_article) > 1:
        while len(cross) < n_cross:
            a, b = rng.sample(paragraphs, 2)
            if a.article == b.article:
                continue
            first = a.sentences[-1] if rng.random() < 0.7 else rng.choice(a.sentences)
            second = b.sentences[0] if rng.random() < 0.7 else rng.choice(b.sentences)
            cross.append(Pair(first, second, 0, "cross"))
    pairs = positives + boundary + cross
    rng.shuffle(pairs)
    return pairs


class EmbeddingCache:
    """Sentence vectors of one embedder, computed once and kept as a .npy + key list on disk."""

    def __init__(self, embedder: "Embedder", directory: Path | None) -> None:
        self.embedder = embedder
        self.directory = directory
        self._index: dict[str, int] = {}
        self._vectors = np.zeros((0, embedder.dimension), dtype=np.float32)

    def _paths(self, sentences: list[str]) -> tuple[Path, Path] | None:
        if self.directory is None:
            return None
        digest = hashlib.sha256("\n".join(sentences).encode()).hexdigest()[:16]
        name = "".join(c if c.isalnum() else "_" for c in self.embedder.model_name)
        return (
            self.directory / f"sage-emb-{name}-{digest}.npy",
            self.directory / f"sage-emb-{name}-{digest}.txt",
        )

    def add(self, sentences: list[str]) -> None:
        """Embed the sentences not seen yet (or load them all from the disk cache)."""
        todo = sorted(set(s for s in sentences if s not in self._index))
        if not todo:
            return
        paths = self._paths(todo)
        vectors = None
        if paths and paths[0].exists():
            vectors = np.load(paths[0])
            if vectors.shape != (len(todo), self.embedder.dimension):
                vectors = None
        if vectors is None:
            t0 = time.perf_counter()
            vectors = self.embedder.embed(todo)
            log.info("embedded %d sentences in %.1fs", len(todo), time.perf_counter() - t0)
            if paths:
                paths[0].parent.mkdir(parents=True, exist_ok=True)
                np.save(paths[0], vectors)
        base = len(self._vectors)
        self._vectors = np.concatenate([self._vectors, vectors.astype(np.float32)])
        for i, s in enumerate(todo):
            self._index[s] = base + i

    def get(self, sentences: list[str]) -> np.ndarray:
        self.add(sentences)
        return self._vectors[[self._index[s] for s in sentences]]

    def embed(self, sentences: list[str]) -> np.ndarray:
        """Same signature as ``Embedder.embed``, so segmenters can run on cached vectors."""
        return self.get(list(sentences))
