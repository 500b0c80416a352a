"""The NLP distilled layer in the ingestion benches.

Ingestion builds the layer by default where the corpus holds short passages
(``distill.nlp_on_ingest = auto``), and the benches ingest passages. They time the ingestion
pipeline itself (the issue-14 ratio, growth, engines), so they pin the layer off; the one bench
that measures the layer (``kgp lab bench ingest --entities``) pins it on for its own run.
"""

from __future__ import annotations

from kg_platform.config import Settings, with_values


def without_entity_layer(settings: Settings) -> Settings:
    """``settings`` with the NLP step never run at ingestion."""
    distill = with_values(settings.distill, nlp_on_ingest=False)
    return settings.model_copy(update={"distill": distill})


def with_entity_layer(settings: Settings) -> Settings:
    """``settings`` with the NLP extractor building the layer at every ingestion."""
    distill = with_values(settings.distill, nlp_on_ingest=True, extractor="nlp")
    return settings.model_copy(update={"distill": distill})
