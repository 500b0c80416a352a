"""The ingestion write path: parse -> sections -> segment -> MoG levels -> pieces + SIMILAR
edges -> embed (batched) -> write (grouped managed transactions) -> run record.

Public API::

    ingest_paths(graph, settings, paths, corpus, include=None, exclude=None, prune=False,
                 progress=None) -> IngestReport

Other feeders (the lab's QA-paragraph ingestion) build on :class:`ingest.session.IngestSession`.
"""

from kg_platform.ingest.pipeline import ingest_paths
from kg_platform.ingest.report import FileError, IngestReport

__all__ = ["FileError", "IngestReport", "ingest_paths"]
