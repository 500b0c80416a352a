"""Step 6, piece graph: the corpus's SIMILAR edges between pieces (the MoGG piece graph) brought
up to date after a run's writes, incrementally or rebuilt (:mod:`kg_platform.ingest.similar`).

Runs after the corpus's ingest lock is released: the sync is safe under concurrent writers.
"""

from __future__ import annotations

from kg_platform._faults import fault_point
from kg_platform.config import Settings
from kg_platform.graph.client import GraphClient
from kg_platform.ingest.similar import PieceGraphSync, sync_piece_graph

__all__ = ["PieceGraphSync", "stored_edge_count", "sync_corpus_piece_graph"]


def sync_corpus_piece_graph(graph: GraphClient, corpus: str, settings: Settings) -> PieceGraphSync:
    """Add and remove the SIMILAR edges the corpus's new and deleted pieces call for."""
    pg = settings.tuning.piece_graph
    fault_point("piece_graph")
    return sync_piece_graph(
        graph,
        corpus,
        pg.k_graph,
        pg.t_graph,
        candidates=pg.candidates,
        rebuild_factor=pg.rebuild_factor,
    )


def stored_edge_count(graph: GraphClient, corpus: str) -> int:
    """The corpus's SIMILAR edge count as the last sync stored it (when this run's was skipped)."""
    rows = graph.read_raw(
        "MATCH (co:Corpus {name: $corpus}) RETURN co.piece_graph_edges AS n",
        corpus=corpus,
    )
    return int(rows[0]["n"] or 0) if rows else 0
