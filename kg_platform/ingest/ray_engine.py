"""Ingestion on Ray (``ingest.engine = "ray"``): parse, plan and embed on Ray workers; write here.

Why this split: the embedder bounds ingestion, while one Neo4j primary can absorb the output of
several embedding workers. So the per-source work that parallelises (parsing, segmentation, embedding: no shared
state) runs on Ray, and everything that makes ingestion safe stays in this process, in the same
:class:`~kg_platform.ingest.runner.IngestRunner` the local engine uses: the corpus lock, skip-by-
hash (decided here, before a file is sent anywhere), grouped write transactions, the run record,
crash-resume and the piece-graph sync are those of in-process ingestion, and so is the graph.

Workers are actors, so each loads its embedder (and segmenter) once, not once per file. Back-
pressure: an actor holds one source at a time, and a finished source is collected only when the
session takes it, which blocks while ``ingest.pipeline_batches`` write batches are in flight; so
Neo4j sees one writer at the pace it commits, and memory holds at most ``workers`` sources plus
those batches, whatever the size of the input.

A worker process that dies (a parser crashing the interpreter, the OOM killer) is restarted by Ray;
the source it held is reported as failed and the batch goes on, as for a corrupt file. The fault
hooks (``KGP_FAULT_*``, :mod:`kg_platform._faults`) are passed on to the workers so the fault
suite can kill one at a known point.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kg_platform.config import Settings
from kg_platform.errors import ConfigError, IngestionError
from kg_platform.ingest.files import Candidate, Parser, read_document
from kg_platform.ingest.rows import SourcePlan
from kg_platform.ingest.steps.parse import document_input
from kg_platform.ingest.steps.plan import plan_with_settings
from kg_platform.ingest.report import FileError, file_error
from kg_platform.ingest.runner import IngestRunner

log = logging.getLogger(__name__)

RESTART_WAIT_S = 120.0  # a restarted worker reloads its embedder; a node may be slow to answer

__all__ = ["PreparedSource", "SourceWorker", "prepare_on_ray", "RayCluster"]


@dataclass
class PreparedSource:
    """What a worker sends back for one file: its embedded plan, or why there is none."""

    uri: str
    plan: SourcePlan | None
    texts_embedded: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    error: FileError | None = None
    #: what the parser noted about the file (invalid bytes replaced, ...)
    warnings: list[str] = field(default_factory=list)


class SourceWorker:
    """One Ray actor's state: the settings, the embedder and the chunker, loaded once."""

    def __init__(
        self, settings: Settings, corpus: str, pipeline: str, parser: Parser | None
    ) -> None:
        from kg_platform.embedding import get_embedder
        from kg_platform.ingest.files import parser_version
        from kg_platform.ingest.steps.plan import embedder_pipeline
        from kg_platform.segmenting.chunker import get_chunker

        self.settings, self.corpus, self.pipeline, self.parser = settings, corpus, pipeline, parser
        self.embedder = get_embedder(settings.embedding)
        mine = embedder_pipeline(settings, self.embedder, parser_version=parser_version(parser))
        if mine != pipeline:
            # a worker with another model or version would store vectors the others cannot match
            raise ConfigError(
                f"this Ray worker would ingest with pipeline {mine!r}, the run writes {pipeline!r}",
                hint="install the same kg-platform version and embedding model on every Ray node",
            )
        self.chunker = get_chunker(settings)

    def ready(self) -> bool:
        """Answers once the actor is up (its constructor ran): used after a restart."""
        return True

    def prepare(self, candidate: Candidate) -> PreparedSource:
        """Parse, plan and embed one file; an error is returned (and reported), never raised."""
        from kg_platform.ingest.embed import embed_with_settings

        timings = {"parse": 0.0, "plan": 0.0, "embed": 0.0}
        warnings: list[str] = []
        try:
            with _timed(timings, "parse"):
                doc = read_document(candidate, self.parser)
                warnings = list(doc.warnings)
                inp = document_input(doc, self.corpus, self.pipeline)
            with _timed(timings, "plan"):
                plan = plan_with_settings(inp, self.chunker, self.settings)
            with _timed(timings, "embed"):
                texts = embed_with_settings([plan], self.embedder, self.settings)
        except Exception as exc:  # noqa: BLE001 - one bad input never stops the batch
            error = file_error(candidate.uri, exc)
            return PreparedSource(candidate.uri, None, 0, timings, error, warnings)
        return PreparedSource(candidate.uri, plan, texts, timings, warnings=warnings)


@contextmanager
def _timed(timings: dict[str, float], stage: str) -> Iterator[None]:
    """Add the block's wall time to ``timings[stage]``, also when it raises."""
    started = time.perf_counter()
    try:
        yield
    finally:
        timings[stage] += time.perf_counter() - started


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise ConfigError(
            "ingest.engine = 'ray' needs Ray, which is not installed",
            hint="pip install -e '.[ray]' in the kg-platform repository, or set "
            "KGP_INGEST__ENGINE=local",
        ) from exc
    return ray


class RayCluster:
    """Join the configured Ray cluster (or start one on this machine) for one run.

    A Ray already initialised in this process (a notebook, a test, an application) is used as it
    is and left running; one started here is shut down at the end of the run.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.started_here = False
        self.ray: Any = None

    def __enter__(self) -> Any:
        ray = self.ray = _import_ray()
        if not ray.is_initialized():
            address = self.settings.ingest.ray_address
            try:
                ray.init(
                    address=address,
                    include_dashboard=False,
                    log_to_driver=False,
                    logging_level=logging.WARNING,
                )
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise ConfigError(
                    f"cannot join the Ray cluster at {address!r}: {exc}",
                    hint="check KGP_INGEST__RAY_ADDRESS (e.g. 'auto' on a cluster node, "
                    "'ray://head:10001' from outside), or unset it to start Ray on this machine",
                ) from exc
            self.started_here = True
        return ray

    def __exit__(self, *exc: object) -> None:
        if self.started_here:
            self.ray.shutdown()


def _worker_count(ray: Any, settings: Settings) -> int:
    ing = settings.ingest
    if ing.ray_workers:
        return int(ing.ray_workers)
    cpus = float(ray.cluster_resources().get("CPU", 1.0))
    return max(1, int(cpus // ing.ray_cpus_per_worker))


def _worker_settings(settings: Settings) -> Settings:
    """Each actor's embedder gets its share of CPUs as threads, and the GPU when it has one; the
    actors run with this process's tuning (:mod:`kg_platform.tuning`)."""
    ing = settings.ingest
    update: dict[str, Any] = {"threads": max(1, int(ing.ray_cpus_per_worker))}
    if ing.ray_gpus_per_worker > 0:
        update["device"] = "cuda"
    out = settings.model_copy(update={"embedding": settings.embedding.model_copy(update=update)})
    # the tuning this process runs with (the lab's overrides are per process), fixed for workers
    return out.with_tuning(**settings.tuning.model_dump())


def _fault_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k.startswith("KGP_FAULT_")}


def prepare_on_ray(
    session: IngestRunner, candidates: Iterable[Candidate], parser: Parser | None = None
) -> None:
    """Have Ray workers parse, plan and embed ``candidates``; queue each result on ``session``.

    Returns when every candidate has been queued or reported; the caller flushes the session.
    """
    settings = session.settings
    ing = settings.ingest
    with RayCluster(settings) as ray:
        n_workers = _worker_count(ray, settings)
        options: dict[str, Any] = {
            "num_cpus": ing.ray_cpus_per_worker,
            "max_restarts": -1,  # a dead worker comes back; the source it held is reported
            "max_task_retries": 0,
        }
        if ing.ray_gpus_per_worker > 0:
            options["num_gpus"] = ing.ray_gpus_per_worker
        if _fault_env():
            options["runtime_env"] = {"env_vars": _fault_env()}
        actor_class = ray.remote(SourceWorker).options(**options)
        worker_settings = _worker_settings(settings)
        workers = [
            actor_class.remote(worker_settings, session.corpus, session.pipeline, parser)
            for _ in range(n_workers)
        ]
        session.emit(event="phase", name=f"ingesting on {n_workers} Ray workers")
        log.info("ingesting on %d Ray workers", n_workers)
        try:
            for candidate, result in _results(ray, workers, iter(candidates)):
                if isinstance(result, BaseException):
                    session.record_error(_worker_died(candidate, result))
                    continue
                for stage, seconds in result.timings.items():
                    session.timings[stage] += seconds
                session.warn(result.uri, result.warnings)
                if result.error is not None:
                    session.record_error(result.error)
                elif result.plan is not None:
                    session.add_planned(result.plan, result.texts_embedded)
        finally:
            for worker in workers:
                ray.kill(worker)


def _results(
    ray: Any, workers: list[Any], candidates: Iterator[Candidate]
) -> Iterator[tuple[Candidate, "PreparedSource | BaseException"]]:
    """Keep every worker busy with one candidate; yield each result as it completes.

    A worker gets its next candidate only after its last result was yielded (and taken by the
    session), which is the back-pressure described in the module docstring. A worker that died
    gets work again once Ray has restarted it: a task sent to an actor that is still restarting
    fails at once, which would report a file that never ran.
    """
    idle = list(workers)
    alive = len(workers)
    running: dict[Any, tuple[Any, Candidate]] = {}
    exhausted = False
    while True:
        while idle and not exhausted:
            candidate = next(candidates, None)
            if candidate is None:
                exhausted = True
                break
            worker = idle.pop()
            running[worker.prepare.remote(candidate)] = (worker, candidate)
        if not running:
            return
        done, _ = ray.wait(list(running), num_returns=1)
        for ref in done:
            worker, candidate = running.pop(ref)
            try:
                result: PreparedSource | BaseException = ray.get(ref)
            except ray.exceptions.RayError as exc:
                result = exc
            yield candidate, result
            if not isinstance(result, BaseException) or _restarted(ray, worker):
                idle.append(worker)
                continue
            alive -= 1
            if alive == 0:
                raise IngestionError(
                    "every Ray worker died and none came back",
                    hint="see the Ray worker logs (/tmp/ray/session_latest/logs on each node); "
                    "the sources written so far stay, and the next run resumes after them",
                )


def _restarted(ray: Any, worker: Any, wait_s: float = RESTART_WAIT_S) -> bool:
    """Wait until Ray has restarted ``worker`` (it reloads its model); False after ``wait_s``."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            return bool(
                ray.get(worker.ready.remote(), timeout=max(1.0, deadline - time.monotonic()))
            )
        except ray.exceptions.GetTimeoutError:
            break
        except ray.exceptions.RayError:
            time.sleep(0.2)  # still restarting: the call failed at once
    log.warning("a Ray worker did not come back within %.0f s; going on without it", wait_s)
    return False


def _worker_died(candidate: Candidate, exc: BaseException) -> FileError:
    name = Path(candidate.uri).name
    return FileError(
        path=candidate.uri,
        error="WorkerDied",
        reason=f"the Ray worker ingesting {name} died ({type(exc).__name__}); "
        "the rest of the batch went on",
        hint="a parser crash or the OOM killer on that node is the usual cause; the next run "
        "tries the file again (see the Ray worker logs under /tmp/ray/session_latest/logs)",
    )
