"""Step 5, write: a batch of embedded plans stored in one Neo4j transaction (the executor's
write thread), and ``--prune``'s deletes.

A kill leaves every batch committed whole or not at all; the fault suite kills a run at the
``write`` fault points on either side of the transaction.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kg_platform._faults import fault_point
from kg_platform.graph.client import GraphClient
from kg_platform.ingest.rows import SourcePlan
from kg_platform.ingest.writer import delete_sources, write_plans

__all__ = ["prune_sources", "write_batch"]


def write_batch(graph: GraphClient, plans: list[SourcePlan], run_id: str) -> None:
    """Write ``plans`` (sources replaced whole) in one transaction, recorded under ``run_id``."""
    fault_point("write")
    write_plans(graph, plans, run_id)
    fault_point("write")


def prune_sources(
    graph: GraphClient,
    corpus: str,
    existing: dict[str, dict[str, Any]],
    keep: Callable[[str], bool],
) -> dict[str, str]:
    """Delete the sources of ``existing`` (id -> state) for which ``keep(uri)`` is false;
    returns the deleted ones, id -> uri."""
    doomed = {sid: st["uri"] for sid, st in existing.items() if not keep(st["uri"])}
    delete_sources(graph, corpus, list(doomed))
    return doomed
