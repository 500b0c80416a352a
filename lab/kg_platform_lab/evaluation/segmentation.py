"""Text-segmentation evaluation: Pk, WindowDiff and the classic baselines SAGE is measured against.

Metrics (Beeferman et al. 1999; Pevzner & Hearst 2002), over a document of N sentences whose
reference segmentation has boundary indicators ``r[j]`` (1 when a segment ends after sentence
``j``, j = 0..N-2) and hypothesis ``h[j]``, with the window ``k`` = half the mean reference
segment length (rounded, at least 1) and the N - k windows ``i = 0..N-k-1``:

* Pk = share of windows where "sentences i and i+k are in the same segment" differs between
  reference and hypothesis (any boundary in ``r[i:i+k]`` vs ``h[i:i+k]``).
* WindowDiff = share of windows where the number of boundaries in ``r[i:i+k]`` and ``h[i:i+k]``
  differs.

Both are errors: lower is better, 0 is perfect. A benchmark reports the mean over documents.

Every segmenter here exposes ``cuts(sentences, vectors=None) -> list[int]`` (cut after sentence
``i``), the same shape as :class:`kg_platform.segmenting.sage.SemanticSegmenter`, so one loop times
and scores them all.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

__all__ = [
    "ENGLISH_STOPWORDS",
    "FixedSegmenter",
    "MethodResult",
    "SimilaritySegmenter",
    "TextTilingSegmenter",
    "boundaries",
    "calibrate_threshold",
    "cuts_to_sizes",
    "evaluate_cuts",
    "pk",
    "run_segmentation_benchmark",
    "window_k",
    "windowdiff",
]


# --------------------------------------------------------------------------- metrics


def boundaries(sizes: Sequence[int]) -> list[int]:
    """Boundary indicators (length N - 1) of a segmentation given as segment sizes."""
    n = sum(sizes)
    out = [0] * max(n - 1, 0)
    pos = 0
    for size in list(sizes)[:-1]:
        pos += size
        if 0 < pos <= n - 1:
            out[pos - 1] = 1
    return out


def cuts_to_sizes(cuts: Sequence[int], n: int) -> list[int]:
    """Segment sizes of ``n`` sentences cut after each index in ``cuts``."""
    sizes, start = [], 0
    for c in sorted(set(cuts)):
        if 0 <= c < n - 1:
            sizes.append(c + 1 - start)
            start = c + 1
    if n > start:
        sizes.append(n - start)
    return sizes


def window_k(reference: Sequence[int]) -> int:
    """Half the mean reference segment length, rounded, at least 1."""
    mean = sum(reference) / max(len(reference), 1)
    return max(1, int(round(mean / 2)))


def _windows(reference: Sequence[int], hypothesis: Sequence[int], k: int | None):
    if sum(reference) != sum(hypothesis):
        raise ValueError(f"segmentations cover {sum(reference)} and {sum(hypothesis)} units")
    k = window_k(reference) if k is None else k
    r = np.asarray(boundaries(reference), dtype=np.int64)
    h = np.asarray(boundaries(hypothesis), dtype=np.int64)
    n = sum(reference)
    if n - k <= 0:
        return None
    cr = np.concatenate([[0], np.cumsum(r)])
    ch = np.concatenate([[0], np.cumsum(h)])
    idx = np.arange(n - k)
    return cr[idx + k] - cr[idx], ch[idx + k] - ch[idx]


def pk(reference: Sequence[int], hypothesis: Sequence[int], k: int | None = None) -> float:
    """Pk error of ``hypothesis`` against ``reference`` (both as segment sizes)."""
    w = _windows(reference, hypothesis, k)
    if w is None:
        return 0.0
    rw, hw = w
    return float(np.mean((rw > 0) != (hw > 0)))


def windowdiff(reference: Sequence[int], hypothesis: Sequence[int], k: int | None = None) -> float:
    """WindowDiff error of ``hypothesis`` against ``reference`` (both as segment sizes)."""
    w = _windows(reference, hypothesis, k)
    if w is None:
        return 0.0
    rw, hw = w
    return float(np.mean(rw != hw))


# --------------------------------------------------------------------------- baselines


class Segmenter(Protocol):
    name: str

    def cuts(self, sentences: Sequence[str], vectors: np.ndarray | None = None) -> list[int]: ...


class SimilaritySegmenter:
    """Cut between adjacent sentences whose embedding cosine is below ``threshold``."""

    name = "similarity"

    def __init__(self, embed: Callable[[list[str]], np.ndarray], threshold: float) -> None:
        self._embed = embed
        self.threshold = threshold

    def cuts(self, sentences: Sequence[str], vectors: np.ndarray | None = None) -> list[int]:
        if len(sentences) < 2:
            return []
        v = self._embed(list(sentences)) if vectors is None else vectors
        sims = np.sum(v[:-1] * v[1:], axis=1)
        return [int(i) for i in np.nonzero(sims < self.threshold)[0]]


class FixedSegmenter:
    """Fixed-size chunking: whole sentences packed up to ``tokens`` tokens (the platform's
    ``fixed`` segmenter at level 1)."""

    name = "fixed"

    def __init__(self, tokens: int, count_tokens: Callable[[list[str]], list[int]] | None = None):
        self.tokens = tokens
        if count_tokens is None:
            from kg_platform.tokens import count_tokens_batch

            count_tokens = count_tokens_batch
        self._count = count_tokens

    def cuts(self, sentences: Sequence[str], vectors: np.ndarray | None = None) -> list[int]:
        from kg_platform.segmenting.sage import pack_coarse

        ranges = pack_coarse(self._count(list(sentences)), self.tokens)
        return [end - 1 for _, end in ranges[:-1]]


# A plain list of English function words, so TextTiling never needs NLTK's stopwords download.
ENGLISH_STOPWORDS = frozenset(
    """
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had
has have having he her here hers herself him himself his how i if in into is it its itself just
me more most my myself no nor not now of off on once only or other our ours ourselves out over
own same she should so some such than that the their theirs them themselves then there these
they this those through to too under until up very was we were what when where which while who
whom why will with would you your yours yourself yourselves also may might must shall its one
s t can't don't won't isn't aren't wasn't weren't it's he's she's they're we're i'm you're
""".split()
)


class TextTilingSegmenter:
    """NLTK's TextTiling (Hearst 1997) adapted to sentence units.

    TextTiling places boundaries only at paragraph breaks, so each sentence is fed as its own
    "paragraph" (sentences joined by blank lines); pseudo-sentences of ``w`` words and blocks of
    ``k`` pseudo-sentences are smaller than NLTK's defaults (20, 10) because our segments are a
    few sentences long. NLTK ignores breaks closer than 100 characters to the previous one, so
    very short sentences cannot end a segment. An explicit stopword list replaces NLTK's corpus
    download. A text too short for the algorithm yields no cut.
    """

    name = "texttiling"

    def __init__(self, w: int = 10, k: int = 4, smoothing_width: int = 2) -> None:
        self.w, self.k, self.smoothing_width = w, k, smoothing_width

    def cuts(self, sentences: Sequence[str], vectors: np.ndarray | None = None) -> list[int]:
        try:
            from nltk.tokenize.texttiling import TextTilingTokenizer
        except ImportError as exc:
            from kg_platform.errors import ConfigError

            raise ConfigError(
                "the TextTiling baseline needs NLTK",
                hint="pip install -e lab/ (NLTK is one of the lab's dependencies)",
            ) from exc

        sentences = [" ".join(s.split()) for s in sentences]
        if len(sentences) < 2:
            return []
        sep = "\n\n"
        text = sep.join(sentences)
        ends, pos = [], 0
        for s in sentences:
            pos += len(s)
            ends.append(pos)
            pos += len(sep)
        tiler = TextTilingTokenizer(
            w=self.w, k=self.k, stopwords=ENGLISH_STOPWORDS, smoothing_width=self.smoothing_width
        )
        try:
            segments = tiler.tokenize(text)
        except (ValueError, IndexError, ZeroDivisionError):
            return []
        out, offset = [], 0
        for seg in segments[:-1]:
            offset += len(seg)
            j = bisect.bisect_left(ends, offset)
            if j < len(sentences) - 1 and ends[j] == offset:
                out.append(j)
            elif 0 < j <= len(sentences) - 1:
                out.append(j - 1 if abs(ends[j - 1] - offset) <= abs(ends[j] - offset) else j)
        return sorted(set(c for c in out if 0 <= c < len(sentences) - 1))


# --------------------------------------------------------------------------- benchmark


@dataclass
class MethodResult:
    name: str
    pk: float
    windowdiff: float
    pairs_per_s: float
    pairs: int
    seconds: float
    n_segments: int

    def as_json(self) -> dict[str, float]:
        return {"pk": self.pk, "windowdiff": self.windowdiff, "pairs_per_s": self.pairs_per_s}


def evaluate_cuts(docs, cuts_per_doc: Sequence[Sequence[int]]) -> tuple[float, float]:
    """Mean Pk and WindowDiff over documents (``docs`` have ``sentences`` and ``sizes``)."""
    pks, wds = [], []
    for doc, cuts in zip(docs, cuts_per_doc):
        hyp = cuts_to_sizes(cuts, len(doc.sentences))
        pks.append(pk(doc.sizes, hyp))
        wds.append(windowdiff(doc.sizes, hyp))
    return float(np.mean(pks)), float(np.mean(wds))


def run_segmentation_benchmark(docs, segmenters: Sequence[Segmenter]) -> list[MethodResult]:
    """Run each segmenter end to end (embedding included) on every document; time and score it."""
    pairs = sum(max(len(d.sentences) - 1, 0) for d in docs)
    results = []
    for seg in segmenters:
        t0 = time.perf_counter()
        cuts = [seg.cuts(list(d.sentences)) for d in docs]
        seconds = time.perf_counter() - t0
        p, w = evaluate_cuts(docs, cuts)
        results.append(
            MethodResult(
                seg.name,
                p,
                w,
                pairs / max(seconds, 1e-9),
                pairs,
                seconds,
                sum(len(c) + 1 for c in cuts),
            )
        )
    return results


def calibrate_threshold(
    docs,
    scores_per_doc: Sequence[np.ndarray],
    candidates: Sequence[float],
    fixed_cuts: Sequence[Sequence[int]] | None = None,
) -> tuple[float, float]:
    """The candidate threshold minimising mean (Pk + WindowDiff) / 2 on ``docs``.

    ``scores_per_doc[d][i]`` scores the pair (i, i + 1); a cut falls where score < threshold.
    ``fixed_cuts`` are cuts always present (e.g. SAGE's coarse boundaries). Returns
    (threshold, its error). Use validation documents only.
    """
    best = (float(candidates[0]), float("inf"))
    for t in candidates:
        cuts = []
        for d, scores in enumerate(scores_per_doc):
            c = set(int(i) for i in np.nonzero(np.asarray(scores) < t)[0])
            if fixed_cuts is not None:
                c |= set(fixed_cuts[d])
            cuts.append(sorted(c))
        p, w = evaluate_cuts(docs, cuts)
        if (p + w) / 2 < best[1] - 1e-12:
            best = (float(t), (p + w) / 2)
    return best


# --------------------------------------------------------------------------- the full benchmark


@dataclass
class SegmentationReport:
    """Test-set results per method plus the parameters each was calibrated to on validation."""

    results: list[MethodResult]
    calibration: dict[str, dict[str, float | int | str]]
    test_documents: int
    test_sentences: int
    true_segments: int

    def as_json(self) -> dict:
        by_name = {r.name: r for r in self.results}
        return {
            "methods": {name: by_name[name].as_json() for name in METHOD_ORDER if name in by_name},
            "calibration": self.calibration,
            "test": {
                "documents": self.test_documents,
                "sentences": self.test_sentences,
                "true_segments": self.true_segments,
            },
        }


METHOD_ORDER = ("sage", "texttiling", "similarity", "fixed")


def segmentation_benchmark(
    settings,
    bench,
    *,
    model_dir=None,
    seed: int = 13,
    ss: float | None = None,
    max_docs: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> SegmentationReport:
    """Calibrate the baselines on validation documents, then run all four methods on test ones.

    Documents are concatenations of held-out paragraphs (see ``sage_data``), so the true
    boundaries are known and none of their text was seen in training. Calibration on
    validation: the similarity threshold, TextTiling's (w, k) on a small grid, and the fixed
    chunk size; SAGE uses ``ss`` (default ``segment.sage_threshold``) and the configured coarse
    size. Throughput counts each method end to end on test, embedding included.
    """
    from pathlib import Path

    from kg_platform.embedding import get_embedder
    from kg_platform.segmenting.sage import load_segmenter
    from kg_platform_lab.sage.data import load_sage_data
    from kg_platform_lab.sage.data import EmbeddingCache

    say = progress or (lambda msg: None)
    data = load_sage_data(Path(bench), seed=seed)
    val, test = data.documents["val"], data.documents["test"]
    if max_docs:
        val, test = val[:max_docs], test[:max_docs]
    embedder = get_embedder(settings.embedding)
    sage = load_segmenter(settings, model_dir=model_dir, embedder=embedder)
    if ss is not None:
        sage.threshold = ss
    cache = EmbeddingCache(embedder, Path(settings.cache_dir) / "sage")
    say(f"validation: {len(val)} documents; test: {len(test)} documents")
    val_vectors = [cache.get(list(d.sentences)) for d in val]
    sims = [np.sum(v[:-1] * v[1:], axis=1) for v in val_vectors]
    sim_t, _ = calibrate_threshold(val, sims, list(np.round(np.arange(0.0, 0.96, 0.025), 3)))
    best_tt = (TextTilingSegmenter(), float("inf"))
    for w in (6, 10, 20):
        for k in (3, 6, 10):
            seg = TextTilingSegmenter(w=w, k=k)
            p, wd = evaluate_cuts(val, [seg.cuts(list(d.sentences)) for d in val])
            if (p + wd) / 2 < best_tt[1]:
                best_tt = (seg, (p + wd) / 2)
    best_fixed = (FixedSegmenter(settings.segment.chunk_tokens), float("inf"))
    for tokens in (32, 48, 64, 96, 128, 192, 256):
        seg = FixedSegmenter(tokens)
        p, wd = evaluate_cuts(val, [seg.cuts(list(d.sentences)) for d in val])
        if (p + wd) / 2 < best_fixed[1]:
            best_fixed = (seg, (p + wd) / 2)
    calibration = {
        "sage": {
            "ss": sage.threshold,
            "coarse_tokens": sage.coarse_tokens,
            "coarse_mode": sage.coarse_mode,
        },
        "similarity": {"threshold": sim_t},
        "texttiling": {"w": best_tt[0].w, "k": best_tt[0].k},
        "fixed": {"tokens": best_fixed[0].tokens},
    }
    say(f"calibrated on validation: {calibration}")
    segmenters = [sage, best_tt[0], SimilaritySegmenter(embedder.embed, sim_t), best_fixed[0]]
    results = run_segmentation_benchmark(test, segmenters)
    return SegmentationReport(
        results,
        calibration,
        len(test),
        sum(len(d.sentences) for d in test),
        sum(len(d.sizes) for d in test),
    )
