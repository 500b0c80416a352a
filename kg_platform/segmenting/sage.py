"""SAGE semantic segmentation (the SAGE paper): cut text into semantically complete chunks.

A small model decides, for every pair of adjacent sentences, whether they belong in one chunk.
Both sentences go through the platform's sentence embedder (frozen: the MLP head is the only
trained part, so the shipped artifact stays small and the embedder stays the one used for
retrieval); the head reads ``[x1, x2, x1 - x2, x1 * x2]`` and outputs a "keep together" score in
[0, 1]. Inference: cut wherever an adjacent pair scores below ``ss``, and never let a chunk
exceed the coarse size ``l`` tokens (unless one sentence does). The paper packs coarse chunks
greedily first (``coarse_mode="greedy"``); the default ``adaptive`` mode places the size cuts at
the weakest pair instead, which keeps the guarantee with fewer arbitrary cuts (see
:func:`sage_cuts`).

Public interface used by ingestion::

    segmenter = load_segmenter(settings)      # SageSegmenter, name == "sage"
    groups = segmenter.split(sentences)       # list[list[str]], consecutive groups

The artifact is a directory with ``head.safetensors`` (float16 weights) and ``meta.json``
(format version, embedder name and dimension, calibrated threshold, training metrics).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from kg_platform.errors import ConfigError, EmbeddingError

if TYPE_CHECKING:  # torch is imported lazily: importing the platform must stay fast
    import torch

    from kg_platform.config import Settings
    from kg_platform.embedding import Embedder

__all__ = [
    "ARTIFACT_FORMAT",
    "SageModel",
    "SageSegmenter",
    "cut_by_scores",
    "default_model_dir",
    "groups_from_cuts",
    "load_model",
    "load_segmenter",
    "pack_coarse",
    "pair_features",
    "sage_cuts",
    "save_model",
]

ARTIFACT_FORMAT = 1
_WEIGHTS = "head.safetensors"
_META = "meta.json"


def default_model_dir() -> Path:
    """The trained default model shipped inside the package (``kg_platform/models/sage``)."""
    return Path(__file__).resolve().parents[1] / "models" / "sage"


# --------------------------------------------------------------------------- features and head


def pair_features(x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    """The paper's pair representation ``[x1, x2, x1 - x2, x1 * x2]`` (rows are pairs).

    The difference and the element-wise product are what lets a small MLP see agreement
    between the two sentences; the paper's ablation shows each part adds accuracy.
    """
    x1 = np.asarray(x1, dtype=np.float32)
    x2 = np.asarray(x2, dtype=np.float32)
    if x1.shape != x2.shape:
        raise ValueError(f"pair_features needs equal shapes, got {x1.shape} and {x2.shape}")
    return np.concatenate([x1, x2, x1 - x2, x1 * x2], axis=-1)


def _build_head(dim: int, hidden: int, dropout: float) -> "torch.nn.Module":
    import torch

    class SageHead(torch.nn.Module):
        """MLP over pair features; ``forward`` returns logits (sigmoid gives the score)."""

        def __init__(self) -> None:
            super().__init__()
            self.net = torch.nn.Sequential(
                torch.nn.Linear(4 * dim, hidden),
                torch.nn.GELU(),
                torch.nn.Dropout(dropout),
                torch.nn.Linear(hidden, 1),
            )

        def forward(self, x1: "torch.Tensor", x2: "torch.Tensor") -> "torch.Tensor":
            feats = torch.cat([x1, x2, x1 - x2, x1 * x2], dim=-1)
            return self.net(feats).squeeze(-1)

    return SageHead()


class NumpySageHead:
    """The trained head's inference in numpy: ``Linear - GELU(erf) - Linear`` then sigmoid.

    Why: segmentation runs at ingestion, where torch is not installed (it is in the ``train``
    extra). The weights are the ones :func:`save_model` writes; decisions match the torch head.
    """

    def __init__(self, state: dict[str, np.ndarray]) -> None:
        self.w1 = np.ascontiguousarray(state["net.0.weight"], dtype=np.float32).T
        self.b1 = np.asarray(state["net.0.bias"], dtype=np.float32)
        self.w2 = np.ascontiguousarray(state["net.3.weight"], dtype=np.float32).T
        self.b2 = np.asarray(state["net.3.bias"], dtype=np.float32)

    def logits(self, x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
        from scipy.special import erf

        hidden = pair_features(x1, x2) @ self.w1 + self.b1
        hidden = 0.5 * hidden * (1.0 + erf(hidden / np.float32(np.sqrt(2.0))))
        return (hidden @ self.w2 + self.b2)[:, 0]

    def eval(self) -> "NumpySageHead":
        return self

    def state_dict(self) -> dict[str, np.ndarray]:
        """The torch layout (``net.0`` / ``net.3``, [out, in]) so :func:`save_model` round-trips."""
        return {
            "net.0.weight": self.w1.T,
            "net.0.bias": self.b1,
            "net.3.weight": self.w2.T,
            "net.3.bias": self.b2,
        }


@dataclass
class SageModel:
    """The trained head plus what it was trained for (embedder, dimension, calibration)."""

    head: Any  # NumpySageHead when loaded; a torch.nn.Module while training
    meta: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def new(
        cls,
        dim: int,
        *,
        hidden: int = 256,
        dropout: float = 0.1,
        embedder: str = "all-MiniLM-L6-v2",
    ) -> "SageModel":
        meta = {
            "format": ARTIFACT_FORMAT,
            "dim": dim,
            "hidden": hidden,
            "dropout": dropout,
            "embedder": embedder,
        }
        return cls(head=_build_head(dim, hidden, dropout), meta=meta)

    @property
    def dim(self) -> int:
        return int(self.meta["dim"])

    def score_pairs(self, x1: np.ndarray, x2: np.ndarray, *, batch_size: int = 512) -> np.ndarray:
        """Keep-together scores in [0, 1] for embedded sentence pairs, ``batch_size`` at a time."""
        out = np.empty(len(x1), dtype=np.float32)
        if isinstance(self.head, NumpySageHead):
            for start in range(0, len(x1), batch_size):
                logits = self.head.logits(
                    np.asarray(x1[start : start + batch_size], np.float32),
                    np.asarray(x2[start : start + batch_size], np.float32),
                )
                out[start : start + len(logits)] = 1.0 / (1.0 + np.exp(-logits.astype(np.float64)))
            return out
        import torch

        self.head.eval()
        with torch.inference_mode():
            for start in range(0, len(x1), batch_size):
                a = torch.from_numpy(
                    np.ascontiguousarray(x1[start : start + batch_size], np.float32)
                )
                b = torch.from_numpy(
                    np.ascontiguousarray(x2[start : start + batch_size], np.float32)
                )
                out[start : start + len(a)] = torch.sigmoid(self.head(a, b)).numpy()
        return out


def save_model(model: SageModel, directory: Path) -> Path:
    """Write the artifact (float16 weights + meta.json) to ``directory``; returns it."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    if isinstance(model.head, NumpySageHead):
        from safetensors.numpy import save_file as save_numpy

        save_numpy(
            {
                k: np.ascontiguousarray(v, dtype=np.float16)
                for k, v in model.head.state_dict().items()
            },
            str(directory / _WEIGHTS),
        )
    else:
        from safetensors.torch import save_file

        state = {
            k: v.detach().to("cpu").half().contiguous() for k, v in model.head.state_dict().items()
        }
        save_file(state, str(directory / _WEIGHTS))
    (directory / _WEIGHTS).chmod(0o644)  # shipped as package data: readable by every user
    meta = dict(model.meta)
    meta.setdefault("format", ARTIFACT_FORMAT)
    meta.setdefault("saved_at", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    (directory / _META).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    return directory


def load_model(directory: Path | None = None) -> SageModel:
    """Load an artifact written by :func:`save_model` (default: the one shipped in the package).

    The head comes back as a :class:`NumpySageHead`: inference needs no torch.
    """
    from safetensors.numpy import load_file

    directory = Path(directory) if directory is not None else default_model_dir()
    meta_path, weights_path = directory / _META, directory / _WEIGHTS
    if not meta_path.exists() or not weights_path.exists():
        raise ConfigError(
            f"no SAGE segmenter model in {directory}",
            hint="train one with `kgp lab segmenter train --out DIR` and set KGP_SEGMENT__SAGE_MODEL=DIR, "
            "or reinstall kg-platform to get the shipped default model",
        )
    meta = json.loads(meta_path.read_text())
    if int(meta.get("format", 0)) != ARTIFACT_FORMAT:
        raise ConfigError(
            f"SAGE model in {directory} has format {meta.get('format')}, expected {ARTIFACT_FORMAT}",
            hint="retrain it with `kgp lab segmenter train` for this kg-platform version",
        )
    state = {k: v.astype(np.float32) for k, v in load_file(str(weights_path)).items()}
    return SageModel(head=NumpySageHead(state), meta=meta)


# --------------------------------------------------------------------------- cutting


def pack_coarse(token_counts: Sequence[int], max_tokens: int) -> list[tuple[int, int]]:
    """Greedy sentence-complete packing: ``[start, end)`` ranges of about ``max_tokens`` tokens.

    A sentence longer than ``max_tokens`` becomes a range of its own; sentences are never split.
    """
    if max_tokens <= 0:
        raise ConfigError(
            "SAGE coarse chunk size must be positive",
            hint="set tuning segment.sage_coarse_tokens ([lab.tuning.segment]) to e.g. 400",
        )
    ranges: list[tuple[int, int]] = []
    start, total = 0, 0
    for i, n in enumerate(token_counts):
        if i > start and total + n > max_tokens:
            ranges.append((start, i))
            start, total = i, 0
        total += n
    if len(token_counts) > start:
        ranges.append((start, len(token_counts)))
    return ranges


def cut_by_scores(scores: Sequence[float], threshold: float) -> list[int]:
    """Indexes ``i`` where a cut falls between sentence ``i`` and ``i + 1`` (score < threshold)."""
    return [i for i, s in enumerate(scores) if s < threshold]


def groups_from_cuts(items: Sequence[str], cuts: Sequence[int]) -> list[list[str]]:
    """Split ``items`` into consecutive groups, cutting after each index in ``cuts``."""
    groups: list[list[str]] = []
    start = 0
    for c in sorted(set(cuts)):
        if 0 <= c < len(items) - 1:
            groups.append(list(items[start : c + 1]))
            start = c + 1
    if start < len(items):
        groups.append(list(items[start:]))
    return groups


COARSE_MODES = ("adaptive", "greedy")


def sage_cuts(
    scores: Sequence[float],
    token_counts: Sequence[int],
    threshold: float,
    max_tokens: int,
    mode: str = "adaptive",
) -> list[int]:
    """SAGE's cut rule over one text: pair scores below ``threshold`` cut, and no chunk may
    exceed ``max_tokens`` (the coarse size ``l``) unless it is a single sentence.

    ``greedy`` is the paper's order: pack sentences greedily into coarse chunks of at most
    ``max_tokens``, keep those boundaries as cuts, then cut inside at low scores. ``adaptive``
    (default) gives the same size guarantee with fewer arbitrary cuts: cut at low scores first,
    then split any chunk still over ``max_tokens`` at its lowest-scoring pair, recursively, so
    the size cuts also fall where the model sees the weakest link. On the validation documents
    the greedy coarse cuts are the largest source of false boundaries (see ``kgp lab bench segment``).
    """
    n = len(token_counts)
    if n < 2:
        return []
    if len(scores) != n - 1:
        raise ValueError(f"{n} sentences need {n - 1} pair scores, got {len(scores)}")
    model_cuts = set(cut_by_scores(scores, threshold))
    if mode == "greedy":
        ranges = pack_coarse(token_counts, max_tokens)
        return sorted(model_cuts | {end - 1 for _, end in ranges[:-1]})
    if max_tokens <= 0:
        raise ConfigError(
            "SAGE coarse chunk size must be positive",
            hint="set tuning segment.sage_coarse_tokens ([lab.tuning.segment]) to e.g. 400",
        )
    prefix = np.concatenate([[0], np.cumsum(np.asarray(token_counts, dtype=np.int64))])
    cuts = set(model_cuts)
    bounds = [-1, *sorted(model_cuts), n - 1]
    stack = [(bounds[i] + 1, bounds[i + 1]) for i in range(len(bounds) - 1)]
    while stack:
        start, end = stack.pop()  # sentences start..end inclusive
        if end > start and prefix[end + 1] - prefix[start] > max_tokens:
            inner = np.asarray(scores[start:end], dtype=np.float64)
            c = start + int(np.argmin(inner))
            cuts.add(c)
            stack += [(start, c), (c + 1, end)]
    return sorted(cuts)


class SageSegmenter:
    """Model cuts bounded by the coarse size; ``split(sentences)`` returns consecutive groups."""

    name = "sage"

    def __init__(
        self,
        model: SageModel,
        embed: Callable[[list[str]], np.ndarray],
        *,
        threshold: float,
        coarse_tokens: int,
        count_tokens: Callable[[list[str]], list[int]] | None = None,
        batch_size: int = 512,
        coarse_mode: str = "adaptive",
    ) -> None:
        if coarse_mode not in COARSE_MODES:
            raise ConfigError(
                f"unknown SAGE coarse mode {coarse_mode!r}",
                hint=f"use one of {', '.join(COARSE_MODES)}",
            )
        self.coarse_mode = coarse_mode
        self.model = model
        self._embed = embed
        self.threshold = float(threshold)
        self.coarse_tokens = int(coarse_tokens)
        self.batch_size = batch_size
        if count_tokens is None:
            from kg_platform.tokens import count_tokens_batch

            count_tokens = count_tokens_batch
        self._count_tokens = count_tokens

    def embed(self, sentences: list[str]) -> np.ndarray:
        vectors = self._embed(list(sentences))
        if vectors.shape[1:] != (self.model.dim,):
            raise EmbeddingError(
                f"SAGE model expects {self.model.dim}-d sentence vectors, embedder gave "
                f"{vectors.shape[1:]}",
                hint=f"use the embedder the model was trained with ({self.model.meta.get('embedder')}) "
                "or retrain with `kgp lab segmenter train`",
            )
        owner = getattr(self._embed, "__self__", None)
        if owner is not None:  # ingestion reuses these for pieces that are one sentence
            from kg_platform.embedding.memo import embedder_key, sentence_memo

            sentence_memo().put(embedder_key(owner), sentences, vectors)
        return vectors

    def score_adjacent(
        self, sentences: Sequence[str], vectors: np.ndarray | None = None
    ) -> np.ndarray:
        """Scores of the ``len(sentences) - 1`` adjacent pairs (1 = keep together)."""
        if len(sentences) < 2:
            return np.zeros(0, dtype=np.float32)
        if vectors is None:
            vectors = self.embed(list(sentences))
        return self.model.score_pairs(vectors[:-1], vectors[1:], batch_size=self.batch_size)

    def cuts(self, sentences: Sequence[str], vectors: np.ndarray | None = None) -> list[int]:
        """Cut indexes (cut after sentence i): model cuts plus the size bound of ``coarse_tokens``."""
        sentences = list(sentences)
        if len(sentences) < 2:
            return []
        scores = self.score_adjacent(sentences, vectors)
        return sage_cuts(
            scores,
            self._count_tokens(sentences),
            self.threshold,
            self.coarse_tokens,
            self.coarse_mode,
        )

    def split(self, sentences: list[str]) -> list[list[str]]:
        """Consecutive groups of ``sentences``; each group is one SAGE (level-1) chunk."""
        return groups_from_cuts(sentences, self.cuts(sentences))


def load_segmenter(
    settings: "Settings | None" = None,
    *,
    model_dir: Path | None = None,
    embedder: "Embedder | None" = None,
) -> SageSegmenter:
    """The SAGE segmenter the settings describe (model from ``segment.sage_model`` or shipped)."""
    if settings is None:
        from kg_platform.config import get_settings

        settings = get_settings()
    if model_dir is None:
        configured = getattr(settings.segment, "sage_model", None)
        model_dir = Path(configured).expanduser() if configured else default_model_dir()
    model = load_model(model_dir)
    if embedder is None:
        from kg_platform.embedding import get_embedder

        embedder = get_embedder(settings.embedding)
    trained_for = model.meta.get("embedder")
    if trained_for and trained_for != embedder.model_name:
        raise ConfigError(
            f"the SAGE model in {model_dir} was trained on {trained_for!r} sentence vectors, "
            f"but the configured embedder is {embedder.model_name!r}",
            hint="train a SAGE model for this embedder with `kgp lab segmenter train --out DIR` and "
            "set KGP_SEGMENT__SAGE_MODEL=DIR",
        )
    threshold, coarse_tokens, coarse_mode = segmenter_params(settings, model.meta)
    return SageSegmenter(
        model,
        embedder.embed,
        threshold=threshold,
        coarse_tokens=coarse_tokens,
        coarse_mode=coarse_mode,
    )


def segmenter_params(settings: Any, meta: dict[str, Any]) -> tuple[float, int, str]:
    """(cut threshold, coarse chunk tokens, coarse mode) of a SAGE model: the ones calibrated
    into its ``meta`` (the shipped model: 0.44, 400, adaptive), unless the lab overrides them
    (:mod:`kg_platform.tuning` ``segment.sage_*``)."""
    tuned = settings.tuning.segment
    threshold = tuned.sage_threshold
    if threshold is None:
        threshold = meta["threshold"]
    coarse_tokens = tuned.sage_coarse_tokens or meta.get("coarse_tokens", 400)
    coarse_mode = tuned.sage_coarse_mode or meta.get("coarse_mode", "adaptive")
    return float(threshold), int(coarse_tokens), str(coarse_mode)
