"""The ingestion write path: parse -> sections -> segment -> MoG levels -> pieces + SIMILAR
edges -> embed (batched) -> write (grouped managed transactions) -> run record.

Public API::

    ingest_paths(graph, settings, paths, corpus, include=None, exclude=None, prune=False,
                 progress=None) -> IngestReport

Other feeders (the lab's QA-paragraph ingestion) build on :class:`ingest.session.IngestSession`.
"""

from typing import TYPE_CHECKING, Any

from kg_platform.ingest.report import FileError, IngestReport

if TYPE_CHECKING:
    from kg_platform.ingest.pipeline import ingest_paths

__all__ = ["FileError", "IngestReport", "ingest_paths"]


def __getattr__(name: str) -> Any:
    """``ingest_paths`` is imported on first use: the pipeline pulls in the segmenters, BM25
    (SciPy) and the piece graph, ~0.15 s that every command touching a submodule such as
    ``ingest.runs`` (``kgp retrieve`` closes dead runs) would otherwise pay at start."""
    if name == "ingest_paths":
        from kg_platform.ingest.pipeline import ingest_paths

        return ingest_paths
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
