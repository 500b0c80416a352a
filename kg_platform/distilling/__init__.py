"""The distilled-knowledge layer (PIKE-RAG L1-L2): what an LLM extracts from chunks.

- ``atomizer``: atomic questions per chunk;
- ``entities``: entities, relations and entity resolution;
- ``tagging``: tag classes, chunk tags, query-tag mapping;
- ``runner``: ``distill_corpus`` (all steps, resumable, metered) and
  ``remove_source_distillation`` (called by ingestion before a changed source is re-written).
"""

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
