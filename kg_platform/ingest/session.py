"""One ingestion run, kept under its earlier name for the callers that import from here: the
runner is :class:`kg_platform.ingest.runner.IngestRunner` (``IngestSession`` is that class), and
the steps it drives are in :mod:`kg_platform.ingest.steps`."""

from __future__ import annotations

from kg_platform.ingest.runner import (
    CANCEL_POLL_S,
    ENTITIES_SKIPPED_FOR_DOCUMENTS,
    IngestRunner,
    IngestSession,
    Progress,
    ingest_lock_name,
)

__all__ = [
    "CANCEL_POLL_S",
    "ENTITIES_SKIPPED_FOR_DOCUMENTS",
    "IngestRunner",
    "IngestSession",
    "Progress",
    "ingest_lock_name",
]
