"""Step 4, embed: vectors for every row of a batch of plans (the executor's embed thread).

Plans that arrive embedded (from a Ray worker, :meth:`IngestRunner.add_planned
<kg_platform.ingest.runner.IngestRunner.add_planned>`) are left as they are.
"""

from __future__ import annotations

from kg_platform._faults import fault_point
from kg_platform.config import Settings
from kg_platform.embedding.base import Embedder
from kg_platform.ingest.embed import embed_with_settings
from kg_platform.ingest.rows import SourcePlan

__all__ = ["embed_batch"]


def embed_batch(plans: list[SourcePlan], embedder: Embedder, settings: Settings) -> int:
    """Fill in the vectors of ``plans``; returns how many texts were embedded."""
    fault_point("embed")
    # plans from add_planned carry their vectors already
    plans = [p for p in plans if not p.embedded]
    return embed_with_settings(plans, embedder, settings)
