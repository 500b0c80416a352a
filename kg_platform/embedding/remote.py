"""An OpenAI-compatible embeddings endpoint (OpenAI, Azure, vLLM, Ollama, llama.cpp)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kg_platform.errors import ConfigError, EmbeddingError

if TYPE_CHECKING:
    from kg_platform.config import EmbeddingSettings


class OpenAIEmbedder:
    def __init__(self, settings: "EmbeddingSettings") -> None:
        if not settings.dimension:
            raise ConfigError(
                "embedding provider 'openai' needs the vector dimension",
                hint="set KGP_EMBEDDING__DIMENSION (e.g. 1536 for text-embedding-3-small)",
            )
        from openai import OpenAI

        key = settings.api_key.get_secret_value() if settings.api_key else "unused"
        self._client = OpenAI(base_url=settings.base_url, api_key=key)
        self.model_name = settings.model
        self.dimension = settings.dimension
        self.max_tokens = 8191
        self.batch_size = settings.batch_size

    def embed(self, texts: list[str]) -> np.ndarray:
        rows: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start : start + self.batch_size]
            try:
                response = self._client.embeddings.create(model=self.model_name, input=batch)
            except Exception as exc:
                raise EmbeddingError(f"embedding endpoint failed: {exc}") from exc
            rows.extend(item.embedding for item in response.data)
        matrix = np.asarray(rows, dtype=np.float32).reshape(len(texts), -1)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.maximum(norms, 1e-12)
