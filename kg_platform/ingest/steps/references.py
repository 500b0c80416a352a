"""Step 7, references: REFERENCES edges between the corpus's sources whose text names another
source's title (:mod:`kg_platform.ingest.references`), under that sync's own lock."""

from __future__ import annotations

from kg_platform.config import Settings
from kg_platform.graph.client import GraphClient
from kg_platform.ingest.references import ReferencesSync, sync_references

__all__ = ["ReferencesSync", "link_references"]


def link_references(graph: GraphClient, corpus: str, settings: Settings) -> ReferencesSync:
    """Bring the corpus's REFERENCES edges up to date."""
    return sync_references(graph, corpus, lease_s=settings.tuning.jobs.lease_s)
