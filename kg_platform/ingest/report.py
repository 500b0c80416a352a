"""The typed result of an ingestion run (also stored as the ``(:IngestRun)`` node)."""

from __future__ import annotations

import logging
from typing import Literal

from pydantic import BaseModel, Field

log = logging.getLogger(__name__)

RunStatus = Literal["completed", "completed_with_errors", "failed", "cancelled"]


class FileError(BaseModel):
    """One input that could not be ingested; the rest of the batch went on."""

    path: str
    error: str  # exception class, e.g. 'CorruptDocument'
    reason: str
    hint: str = ""


class FileWarning(BaseModel):
    """Something a parser noted about an input that was still ingested (invalid bytes replaced,
    an owner-password PDF read anyway, an attachment skipped): the user must see it."""

    path: str
    warning: str


def file_error(path: str, exc: BaseException) -> FileError:
    """What the report says of an input that raised ``exc``: a :class:`~kg_platform.errors.KGPError`
    carries its own reason and hint; anything else is a bug of ours, logged with its traceback."""
    from kg_platform.errors import KGPError

    if isinstance(exc, KGPError):
        return FileError(
            path=path,
            error=type(exc).__name__,
            reason=str(exc.args[0]) if exc.args else str(exc),
            hint=exc.hint,
        )
    log.exception("unexpected error while ingesting %s", path, exc_info=exc)
    return FileError(
        path=path,
        error=type(exc).__name__,
        reason=str(exc) or repr(exc),
        hint="this is a bug in kg-platform; please report it with the file",
    )


class IngestReport(BaseModel):
    run_id: str
    corpus: str
    status: RunStatus = "completed"
    added: list[str] = Field(default_factory=list)  # uris written for the first time
    replaced: list[str] = Field(default_factory=list)  # uris whose content or pipeline changed
    skipped: list[str] = Field(default_factory=list)  # uris unchanged since the last run
    pruned: list[str] = Field(default_factory=list)  # uris removed by --prune
    errors: list[FileError] = Field(default_factory=list)
    warnings: list[FileWarning] = Field(default_factory=list)  # parser notes on ingested inputs
    counts: dict[str, int] = Field(default_factory=dict)  # nodes written per type this run
    tokens: int = 0
    texts_embedded: int = 0
    duration_s: float = 0.0
    timings: dict[str, float] = Field(default_factory=dict)  # seconds per phase
    fatal: str | None = None
    interrupted: list[str] = Field(default_factory=list)  # earlier runs found dead and closed
    #: how this run's piece-graph sync went: "full", "incremental", or "" (nothing to do)
    piece_graph_mode: str = ""
    #: what the NLP step did with the distilled layer's entities, in words ("" = nothing to say)
    entities: str = ""

    @property
    def exit_code(self) -> int:
        """CLI convention: 0 ok, 1 completed with errors, 2 failed or cancelled."""
        return {"completed": 0, "completed_with_errors": 1, "failed": 2, "cancelled": 2}[
            self.status
        ]

    def summary(self) -> str:
        c = self.counts
        parts = [
            f"run {self.run_id} [{self.status}] corpus={self.corpus}",
            f"sources: {len(self.added)} added, {len(self.replaced)} replaced, "
            f"{len(self.skipped)} unchanged, {len(self.pruned)} pruned, "
            f"{len(self.errors)} failed"
            + (f", {len(self.warnings)} warning(s)" if self.warnings else ""),
            f"written: {c.get('sections', 0)} sections, {c.get('chunks', 0)} chunks, "
            f"{c.get('pieces', 0)} pieces; SIMILAR edges in corpus: "
            f"{c.get('similar_edges', 0)}"
            + (f" ({self.piece_graph_mode} update)" if self.piece_graph_mode else ""),
            f"{self.tokens} tokens in {self.duration_s:.1f}s",
        ]
        if self.entities:
            parts.append(self.entities)
        for err in self.errors:
            parts.append(
                f"  ! {err.path}: {err.error}: {err.reason}"
                + (f" (hint: {err.hint})" if err.hint else "")
            )
        for warn in self.warnings:
            parts.append(f"  warning: {warn.path}: {warn.warning}")
        if self.fatal:
            parts.append(f"  fatal: {self.fatal}")
        return "\n".join(parts)
