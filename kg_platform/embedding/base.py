"""The :class:`Embedder` protocol and its factory.

Heavy dependencies (onnxruntime, torch, sentence-transformers, openai) are imported only when
the provider that needs them is chosen, so importing kg_platform stays fast.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from kg_platform.errors import ConfigError

if TYPE_CHECKING:
    from kg_platform.config import EmbeddingSettings


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension."""

    model_name: str
    dimension: int
    max_tokens: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """Return an array of shape (len(texts), dimension); rows have unit length."""
        ...


def has_token_states(embedder: object) -> bool:
    """Whether ``embedder`` also exposes its word-piece states (``embed_tokens``: the ONNX one
    does), which late chunking and the late-interaction rerank need."""
    return callable(getattr(embedder, "embed_tokens", None))


_CACHE: dict[tuple, Embedder] = {}
_LOCK = threading.Lock()


def get_embedder(settings: "EmbeddingSettings | None" = None) -> Embedder:
    """The embedder the settings describe; one instance per configuration per process."""
    if settings is None:
        from kg_platform.config import get_settings

        settings = get_settings().embedding
    key = (
        settings.provider,
        settings.model,
        settings.device,
        settings.base_url,
        settings.batch_size,
        settings.batch_tokens,
        settings.quantize,
        settings.threads,
    )
    with _LOCK:
        if key not in _CACHE:
            if settings.provider == "onnx":
                from kg_platform.config import default_cache_dir
                from kg_platform.embedding.onnx import OnnxEmbedder

                _CACHE[key] = OnnxEmbedder(
                    settings.model,
                    cache_dir=default_cache_dir(),
                    batch_size=settings.batch_size,
                    batch_tokens=settings.batch_tokens,
                    threads=settings.threads,
                    quantize=settings.quantize,
                    device=settings.device,
                )
            elif settings.provider == "sentence-transformers":
                from kg_platform.embedding.local import SentenceTransformerEmbedder

                _CACHE[key] = SentenceTransformerEmbedder(
                    settings.model, device=settings.device, batch_size=settings.batch_size
                )
            elif settings.provider == "openai":
                from kg_platform.embedding.remote import OpenAIEmbedder

                _CACHE[key] = OpenAIEmbedder(settings)
            else:  # pragma: no cover - pydantic restricts the literal
                raise ConfigError(f"unknown embedding provider {settings.provider!r}")
        return _CACHE[key]


def quantized_embedder(embedder: Embedder, settings: EmbeddingSettings, quantize: str) -> Embedder:
    """``embedder`` at the quantisation ``quantize``: with ``"int8"`` and ``embedder`` the fp32
    ONNX model ``settings`` describe, the int8 copy of that model (about half the CPU); else
    ``embedder`` itself (another provider, a test's own, or no quantisation asked).

    Two readers ask for the copy: entity names, at ingestion (resolution, the
    ``entity_embedding`` index) and at query time (a question's names), so both sides use the
    same one (``distill.name_quantize``; names are a handful of word pieces, and their int8
    vectors agree with fp32 at cosine >= 0.98 for 99 in 100 names); and the late rerank's
    word-piece states of the candidates it reads (``rerank.quantize``)."""
    if quantize == "none" or settings.provider != "onnx" or settings.quantize == quantize:
        return embedder
    if getattr(embedder, "model_name", None) != settings.model:
        return embedder
    if getattr(embedder, "quantize", None) != settings.quantize:
        return embedder
    return get_embedder(settings.model_copy(update={"quantize": quantize}))
