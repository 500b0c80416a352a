"""The boundary model of the semantic segmenter: sentence-pair features, the MLP head, its file.

Split out of :mod:`kg_platform.segmenting.sage` so the trained part (the pair representation and
head of the SAGE paper, its numpy inference and the artifact on disk that the lab's trainer
writes) sits apart from the cutting rules and the segmenter that use its scores. The names stay
importable from ``kg_platform.segmenting.sage``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from kg_platform.errors import ConfigError

if TYPE_CHECKING:  # torch is imported lazily: importing the platform must stay fast
    import torch

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

    class BoundaryHead(torch.nn.Module):
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

    return BoundaryHead()


class NumpyBoundaryHead:
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

    def eval(self) -> "NumpyBoundaryHead":
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
class BoundaryModel:
    """The trained head plus what it was trained for (embedder, dimension, calibration)."""

    head: Any  # NumpyBoundaryHead when loaded; a torch.nn.Module while training
    meta: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def new(
        cls,
        dim: int,
        *,
        hidden: int = 256,
        dropout: float = 0.1,
        embedder: str = "all-MiniLM-L6-v2",
    ) -> "BoundaryModel":
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
        if isinstance(self.head, NumpyBoundaryHead):
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


def save_model(model: BoundaryModel, directory: Path) -> Path:
    """Write the artifact (float16 weights + meta.json) to ``directory``; returns it."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    if isinstance(model.head, NumpyBoundaryHead):
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


def load_model(directory: Path | None = None) -> BoundaryModel:
    """Load an artifact written by :func:`save_model` (default: the one shipped in the package).

    The head comes back as a :class:`NumpyBoundaryHead`: inference needs no torch.
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
    return BoundaryModel(head=NumpyBoundaryHead(state), meta=meta)
