"""The ingestion write path, as the ordered steps of :mod:`kg_platform.ingest.steps` (discover ->
parse -> segment and plan -> embed -> write -> piece graph -> references -> distill), driven by
:class:`kg_platform.ingest.runner.IngestRunner` (run record, corpus lock, executor).

Public API::

    ingest_paths(graph, settings, paths, corpus, include=None, exclude=None, prune=False,
                 progress=None) -> IngestReport

Other feeders (the lab's QA-paragraph ingestion) build on :class:`ingest.runner.IngestRunner`.
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
