"""The distilled-knowledge layer (PIKE-RAG L1-L2): what an LLM, or spaCy, extracts from chunks.

- ``atomizer``: atomic questions per chunk;
- ``entities``: entities, relations and entity resolution;
- ``nlp`` / ``nlp_parser`` / ``nlp_step``: the NLP extractor (spaCy, no LLM);
- ``tagging``: tag classes, chunk tags, query-tag mapping;
- ``runner``: ``distill_corpus`` (all steps, resumable, metered) and
  ``remove_source_distillation`` (called by ingestion before a changed source is re-written).

The runner's names are imported on first use: the NLP extractor's parsing child imports
``distilling.nlp`` and must not pay for the runner's Neo4j driver and LLM client.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kg_platform.distilling.runner import (
        NO_LLM_MESSAGE,
        STEPS,
        DistillReport,
        distill_corpus,
        parse_steps,
        record_distillation,
        remove_distillation_tx,
        remove_source_distillation,
    )

__all__ = [
    "NO_LLM_MESSAGE",
    "STEPS",
    "DistillReport",
    "distill_corpus",
    "parse_steps",
    "record_distillation",
    "remove_distillation_tx",
    "remove_source_distillation",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from kg_platform.distilling import runner

        return getattr(runner, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
