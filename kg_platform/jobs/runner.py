"""Run one ingestion job: lock, ingest, distill, record, apply retention, unlock.

The ingestion path (:func:`kg_platform.ingest.ingest_paths`) records its own ``(:IngestRun)``;
the runner adds the job's view to that node (``job``, ``trigger``, ``host``, ``llm_tokens``,
``distill``, ``job_duration_s``) so Neo4j Browser and ``kgp jobs history`` show one record per
run. A failure before ingestion could record anything (bad settings, unreachable embedder)
still leaves a ``failed`` run, so a scheduled job never fails without a trace.
"""

from __future__ import annotations

import json
import logging
import socket
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Literal

from kg_platform.config import Settings
from kg_platform.errors import KGPError
from kg_platform.graph import GraphClient
from kg_platform.graph.lock import JobLock
from kg_platform.jobs.spec import JobSpec

if TYPE_CHECKING:
    from kg_platform.embedding import Embedder
    from kg_platform.ingest import IngestReport

log = logging.getLogger(__name__)

Trigger = Literal["manual", "schedule"]


@dataclass
class JobRunResult:
    """What one run of a job did. ``exit_code``: 0 ok, 1 completed with errors, 2 failed."""

    job: str
    run_id: str
    status: str
    corpus: str
    duration_s: float = 0.0
    llm_tokens: int = 0
    report: "IngestReport | None" = None
    distill: dict[str, Any] | None = None
    errors: list[dict[str, str]] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return {"completed": 0, "completed_with_errors": 1}.get(self.status, 2)

    def summary(self) -> str:
        head = f"job {self.job}: run {self.run_id} [{self.status}] in {self.duration_s:.1f}s"
        body = self.report.summary() if self.report else ""
        extra = [f"  ! {e.get('error')}: {e.get('reason')}" for e in self.errors]
        if self.distill and self.distill.get("skipped"):
            extra.append(f"  distillation skipped: {self.distill['skipped']}")
        return "\n".join(x for x in [head, body, *extra] if x)


def job_settings(spec: JobSpec, settings: Settings) -> Settings:
    """The platform settings with the job's options applied (the original is not changed)."""
    import os

    from kg_platform.config import with_values

    opts = spec.options
    segment = with_values(
        settings.segment,
        chunk_tokens=opts.chunk_tokens,
        levels=opts.levels,
        segmenter=opts.segmenter,
    )
    llm = settings.llm
    if opts.llm is not None:
        update = opts.llm.model_dump(exclude_none=True, exclude={"api_key_env"})
        if opts.llm.api_key_env:
            key = os.environ.get(opts.llm.api_key_env)
            if key:
                update["api_key"] = key
        # Validated through the settings model, so ``api_key`` becomes a secret string.
        llm = with_values(settings.llm, **update)
    ingest = with_values(
        settings.ingest,
        engine=opts.engine,
        ray_address=opts.ray_address,
        ray_workers=opts.ray_workers,
    )
    return settings.model_copy(update={"segment": segment, "llm": llm, "ingest": ingest})


def _now_iso() -> str:
    return datetime.now(timezone.utc).isoformat()


def run_job(
    spec: JobSpec,
    graph: GraphClient,
    settings: Settings,
    *,
    trigger: Trigger = "manual",
    embedder: "Embedder | None" = None,
    owner: str | None = None,
) -> JobRunResult:
    """Run ``spec`` once under its Neo4j lock.

    Raises :class:`~kg_platform.errors.JobLocked` when another process runs the same job; every
    other failure is recorded as a ``failed`` run and returned, not raised.
    """
    lock = JobLock(graph, spec.name, lease_s=settings.tuning.jobs.lease_s, owner=owner)
    with lock:
        return _run_locked(spec, graph, settings, lock, trigger, embedder)


def _run_locked(
    spec: JobSpec,
    graph: GraphClient,
    settings: Settings,
    lock: JobLock,
    trigger: Trigger,
    embedder: "Embedder | None",
) -> JobRunResult:
    started_iso = _now_iso()
    t0 = time.perf_counter()
    host = socket.gethostname()
    result = JobRunResult(job=spec.name, run_id="", status="failed", corpus=spec.corpus)
    try:
        cfg = job_settings(spec, settings)
        from kg_platform.ingest import ingest_paths

        report = ingest_paths(
            graph,
            cfg,
            spec.resolved_paths(),
            spec.corpus,
            include=spec.sources.include,
            exclude=spec.sources.exclude,
            prune=spec.sources.prune,
            embedder=embedder,
        )
    except Exception as exc:  # noqa: BLE001 - a scheduled job records its failure, never crashes
        result.run_id = f"run-{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"
        result.errors.append(
            {
                "path": "",
                "error": type(exc).__name__,
                "reason": str(exc),
                "hint": getattr(exc, "hint", ""),
            }
        )
        result.duration_s = round(time.perf_counter() - t0, 3)
        log.error("job %s failed before ingestion finished: %s", spec.name, exc)
        try:
            graph.write(
                "jobs/run_failed",
                id=result.run_id,
                corpus=spec.corpus,
                job=spec.name,
                trigger=trigger,
                host=host,
                owner=lock.owner,
                started=started_iso,
                errors=json.dumps(result.errors),
                duration_s=result.duration_s,
            )
        except KGPError as rec_exc:
            log.error("could not record the failed run of job %s: %s", spec.name, rec_exc)
        return result

    result.report, result.run_id, result.status = report, report.run_id, report.status
    lock.run_id = report.run_id
    if spec.options.distill and report.status != "failed":
        _distill(spec, graph, cfg, embedder, result)
    if lock.lost:
        result.errors.append(
            {
                "path": "",
                "error": "JobLockLost",
                "reason": "the job lock expired during the run and another process took it",
                "hint": "raise KGP_TUNING__JOBS__LEASE_S",
            }
        )
    if result.errors and result.status == "completed":
        result.status = "completed_with_errors"
    result.duration_s = round(time.perf_counter() - t0, 3)
    all_errors = [e.model_dump() for e in report.errors] + result.errors
    if report.fatal:
        all_errors.append({"path": "", "error": "fatal", "reason": report.fatal, "hint": ""})
    try:
        graph.write(
            "jobs/run_annotate",
            id=report.run_id,
            job=spec.name,
            trigger=trigger,
            host=host,
            owner=lock.owner,
            llm_tokens=result.llm_tokens,
            distill=json.dumps(result.distill) if result.distill else None,
            job_duration_s=result.duration_s,
            status=result.status,
            extra_errors=json.dumps(all_errors) if result.errors else None,
        )
        deleted = graph.write(
            "jobs/prune_runs",
            job=spec.name,
            keep_runs=spec.retention.keep_runs,
            keep_days=spec.retention.keep_days,
        )
        if deleted and deleted[0]["deleted"]:
            log.info("job %s: retention deleted %d old runs", spec.name, deleted[0]["deleted"])
    except KGPError as exc:
        log.error("could not annotate run %s of job %s: %s", report.run_id, spec.name, exc)
    return result


def _distill(
    spec: JobSpec,
    graph: GraphClient,
    cfg: Settings,
    embedder: "Embedder | None",
    result: JobRunResult,
) -> None:
    """Run the job's distillation steps; without an LLM they are skipped with a note."""
    try:
        from kg_platform.distilling.configured import distill_with_configured_llm

        if embedder is None:
            from kg_platform.embedding import get_embedder

            embedder = get_embedder(cfg.embedding)
        rep = distill_with_configured_llm(
            graph, embedder, cfg, corpus=spec.corpus, steps=list(spec.options.distill)
        )
        result.distill = rep.to_dict()
        result.llm_tokens = int(rep.usage.get("total_tokens", 0) or 0)
        if rep.failed:
            result.errors.append(
                {
                    "path": "",
                    "error": "DistillationFailures",
                    "reason": f"{rep.failed} chunks failed distillation",
                    "hint": "re-run the job; finished chunks are not redone",
                }
            )
    except Exception as exc:  # noqa: BLE001 - ingestion landed; report the distillation failure
        result.errors.append(
            {
                "path": "",
                "error": type(exc).__name__,
                "reason": str(exc),
                "hint": getattr(exc, "hint", ""),
            }
        )
