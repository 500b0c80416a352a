"""Settings sections of retrieval: ``retrieve`` (every door's defaults), ``mog``, ``sage`` and
``rerank``.

Why a module of its own: these choose how a question finds its evidence in a corpus already
written (the strategy, the routers, the post-processors and their model files), without changing
the graph. :class:`kg_platform.config.Settings` gathers them with the other sections; import them
from :mod:`kg_platform.config`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

__all__ = ["MoGSettings", "RerankSettings", "RetrieveSettings", "SageSelectSettings"]


class RetrieveSettings(BaseModel):
    """Defaults of every front door that retrieves (SDK, ``kgp retrieve``, LangChain, ``ask``).

    ``auto`` is the default strategy: ``propagate`` over long documents and ``mogg`` over pools
    of short passages, chosen per scope by its level-2 chunks per source
    (:mod:`kg_platform.retrieval.strategies.auto`), and ``entity`` over passages with the distilled layer
    for a question that names one of its entities: each leads ``hybrid`` given the same rerank
    where it runs.
    ``select = auto`` adds the late-interaction rerank, which uses only the bundled embedder and
    costs about 0.2 s per question on a small CPU.
    """

    strategy: str = Field(
        "auto",
        description="strategy used when a caller names none (`KnowledgePlatform.strategies()` "
        "lists them, as `kgp lab eval --list` does with the lab); auto "
        "= propagate over long documents, mogg over short passages (entity for a question that "
        "names an entity of the distilled layer)",
    )
    k: int = Field(5, ge=1, le=1000, description="items returned when a caller names no k")
    select: Literal["auto", "none", "sage", "late"] = Field(
        "auto",
        description="post-processor: none, sage (rerank + gradient cut), late (cosine + MaxSim "
        "rerank), auto (late when the embedder exposes word-piece states, as the bundled one "
        "does; else none)",
    )
    fetch: int = Field(
        200,
        ge=1,
        le=100_000,
        description="index hits fetched before the corpus filter, per index query of the "
        "mog, propagate and entity strategies, on graphs whose indexes are shared by every "
        "corpus (not yet through `kgp init`; raise it when one corpus is a small share of the "
        "database); a corpus's own indexes are asked for what is needed",
    )


class MoGSettings(BaseModel):
    """The ``mog`` and ``mogg`` strategies (Mix-of-Granularity and its graph variant)."""

    default_router: str = Field(
        "builtin",
        description="router used for a corpus without its own: 'builtin' (the routers "
        "shipped in kg_platform/models/routers, trained on the bench dev sets), a directory with "
        "mog/ and mogg/ router folders, or 'none' (one fixed level)",
    )


class SageSelectSettings(BaseModel):
    """``--select sage``: rerank a strategy's candidates, then cut where the scores fall off."""

    cross_encoder: str | None = Field(None, description="path of a local cross-encoder model")


class RerankSettings(BaseModel):
    """``--select late``: rerank a strategy's candidates with cosine + MaxSim (late interaction
    over the embedder's word-piece states; kg_platform/retrieval/rerank/late_interaction.py)."""

    weights_file: str | None = Field(
        None,
        description="per-strategy weights of cosine, MaxSim, the strategy's score and rank, "
        "written by `kgp lab rerank fit`; unset = the shipped file (the unfitted rule for "
        "every strategy but `entity`, whose walk's rank also counts)",
    )
    query_head: Literal["auto", "on", "off"] = Field(
        "auto",
        description="MaxSim reads the question's word pieces through the head trained on "
        "QASPER's train split (kg_platform/models/rerank/query-head.onnx): auto = where the "
        "scope holds long documents (it lifts papers and not short multi-hop passages), on, "
        "off",
    )
    structure: Literal["auto", "on", "off"] = Field(
        "auto",
        description="order the candidates by the document rerank fitted on QASPER's train split "
        "(kg_platform/models/rerank/structure-rerank.weights.json): cosine and MaxSim plus "
        "each candidate's section-mates, neighbours, place in the document and length; auto = "
        "where the scope holds long documents, on, off = the fixed cosine + MaxSim sum",
    )
