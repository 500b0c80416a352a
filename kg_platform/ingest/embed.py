"""Vectors for a batch of planned sources, with the model called once per batch.

Pieces and level-1 chunks go through the model; a chunk of level >= 2 gets the normalised mean of
its children's vectors (``embed_higher_levels = "mean"``: no extra model time and no
truncation at the model's 256 word pieces) or the model on its own text (``"direct"``). Sections
are embedded by their title path and sources by their title. Identical texts (a QA paragraph's
title is also its section path) are embedded once, and a text the SAGE segmenter already embedded
(a piece that is one sentence) is taken from the sentence memo instead of the model.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kg_platform.embedding.base import Embedder
from kg_platform.embedding.memo import embedder_key, sentence_memo
from kg_platform.ingest.plan import SourcePlan

__all__ = ["embed_plans", "texts_to_embed"]


def texts_to_embed(plans: Sequence[SourcePlan], higher: str) -> list[str]:
    """The distinct texts the model sees for these plans (also the benchmark's ceiling input)."""
    seen: dict[str, None] = {}
    for plan in plans:
        seen.setdefault(plan.source["props"]["title"] or plan.source["props"]["uri"], None)
        for sec in plan.sections:
            seen.setdefault(sec["props"]["path"] or sec["props"]["title"] or "", None)
        for chunk in plan.chunks:
            if chunk["level"] == 1 or higher == "direct":
                seen.setdefault(chunk["props"]["text"], None)
        for piece in plan.pieces:
            seen.setdefault(piece["props"]["text"], None)
    return list(seen)


def embed_plans(plans: Sequence[SourcePlan], embedder: Embedder, higher: str = "mean") -> int:
    """Attach an ``embedding`` (list of floats) to every row of ``plans``; return the number of
    texts the model embedded (memo hits excluded)."""
    texts = texts_to_embed(plans, higher)
    known = sentence_memo().take(embedder_key(embedder), texts)
    todo = [t for t in texts if t not in known]
    matrix = embedder.embed(todo) if todo else np.zeros((0, embedder.dimension), np.float32)
    index = {t: i for i, t in enumerate(todo)}

    def vec(text: str) -> np.ndarray:
        hit = known.get(text)
        return hit if hit is not None else matrix[index[text]]

    for plan in plans:
        plan.source["embedding"] = vec(plan.source["props"]["title"]
                                       or plan.source["props"]["uri"]).tolist()
        for sec in plan.sections:
            sec["embedding"] = vec(sec["props"]["path"] or sec["props"]["title"] or "").tolist()
        by_id: dict[str, np.ndarray] = {}
        for chunk in sorted(plan.chunks, key=lambda c: c["level"]):
            if chunk["level"] == 1 or higher == "direct":
                v = vec(chunk["props"]["text"])
            else:
                mean = np.mean([by_id[k] for k in plan.children[chunk["id"]]], axis=0)
                v = mean / max(float(np.linalg.norm(mean)), 1e-12)
            by_id[chunk["id"]] = v
            chunk["embedding"] = np.asarray(v, dtype=np.float32).tolist()
        for piece in plan.pieces:
            piece["embedding"] = vec(piece["props"]["text"]).tolist()
    return len(todo)
