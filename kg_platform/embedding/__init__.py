"""Sentence embeddings: the one seam through which text becomes vectors.

Use :func:`get_embedder` (cached per settings) and call ``embed(texts)``; vectors are
L2-normalised ``float32`` rows, so a dot product is the cosine similarity.
"""

from kg_platform.embedding.base import Embedder, get_embedder

__all__ = ["Embedder", "get_embedder"]
