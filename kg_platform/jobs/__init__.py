"""Scheduled ingestion jobs: declarative specs, a Neo4j-held lock, a runner and a scheduler.

Public surface::

    spec = find_spec("ingestion", "samples")          # JobSpec (validated TOML/YAML)
    result = run_job(spec, graph, settings)           # JobRunResult; raises JobLocked if busy
    JobScheduler(settings, Path("ingestion"), platform=KnowledgePlatform(settings)).run()
    # until SIGTERM; jobs run through the platform (the SDK), which the scheduler is handed
"""

from kg_platform.graph.lock import JobLock, lock_states
from kg_platform.jobs.runner import JobRunResult, run_job
from kg_platform.jobs.spec import JobSpec, find_spec, load_spec, load_specs

__all__ = [
    "JobLock",
    "JobRunResult",
    "JobSpec",
    "find_spec",
    "load_spec",
    "load_specs",
    "lock_states",
    "run_job",
]
