"""From a parsed document (or QA paragraph) to the rows the writer stores.

Kept for the callers that import from here: the code lives in the ingestion's steps,
:mod:`kg_platform.ingest.steps.parse` (``SourceInput``, ``document_input``),
:mod:`kg_platform.ingest.steps.plan` (``plan_source``, ``pipeline_signature``) and
:mod:`kg_platform.segmenting.paragraphs` (``Segment``, the paragraph packing).
"""

from __future__ import annotations

from kg_platform.ingest.rows import SourcePlan
from kg_platform.ingest.steps.parse import SectionInput, SourceInput, document_input
from kg_platform.ingest.steps.plan import (
    embedder_pipeline,
    pipeline_signature,
    plan_source,
    plan_with_settings,
)
from kg_platform.segmenting.paragraphs import Segment

__all__ = [
    "Segment",
    "SectionInput",
    "SourceInput",
    "SourcePlan",
    "plan_source",
    "plan_with_settings",
    "document_input",
    "embedder_pipeline",
    "pipeline_signature",
]
