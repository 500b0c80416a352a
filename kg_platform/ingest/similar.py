"""Keeps a corpus' SIMILAR edges equal to the BM25 piece graph of its current pieces.

Runs after the sources of a run are written, only when the corpus is marked dirty (a source was
written, replaced or pruned since the last sync, including by a run that crashed before this
step). The graph is computed from a snapshot of the corpus' pieces, then applied in ONE write
transaction that first locks the Corpus node and checks that its ``piece_graph_version`` is still
the one the snapshot was taken at. Every source write bumps that version under the same lock
(``ingest/mark_corpus_dirty``), so:

- if nobody wrote meanwhile, the diff against the stored edges is applied and the corpus is
  marked clean in the same commit (a re-run then writes nothing);
- if another writer landed in the window, nothing is applied and the sync starts over from a new
  snapshot; when that writer's own sync got there first the corpus is already clean and this one
  stops. A stale snapshot can therefore never delete the edges of pieces it did not see, nor mark
  the corpus clean over them.

Full or incremental. The first sync of a corpus builds the whole graph and freezes its BM25
statistics (``(:PieceGraphStats)`` + ``(:PieceTerm {df})``); later syncs only let the pending
pieces (``:SimPending``: new, replaced, or whose chosen neighbour was deleted) choose, among the
candidates the fulltext index proposes, and let those candidates take a new piece that beats
their k-th choice (``granularity/incremental.py``). With frozen statistics the result equals a
full build with the same statistics, and the cost of a run grows with what it adds, not with the
corpus. Once the corpus has grown or shrunk by ``piece_graph.rebuild_factor`` since the freeze (or
on demand, ``force``), the graph is rebuilt with fresh statistics. An incremental update is
applied in ONE transaction under the same version check.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Any

from neo4j import ManagedTransaction

from kg_platform.corpus_name import corpus_key
from kg_platform.graph.client import GraphClient
from kg_platform.graph.cypher import cypher
from kg_platform.graph.lucene import fulltext_query
from kg_platform.granularity.bm25 import BM25Stats, bm25_tokens, piece_terms
from kg_platform.granularity.incremental import StoredPiece, update_choices
from kg_platform.granularity.piece_graph import PieceGraph, build_full, content_order_key
from kg_platform.graph.corpus_indexes import own_prefix

__all__ = [
    "sync_piece_graph",
    "PieceGraphSync",
    "content_ordered",
    "desired_edges",
    "frozen_stats",
]

_SCORE_EPS = 1e-6
#: Snapshots tried before giving up while other writers keep changing the corpus; the corpus then
#: stays dirty and the next sync (theirs, or the next run's) brings it up to date.
_ATTEMPTS = 5


@dataclass
class PieceGraphSync:
    pieces: int = 0
    edges: int = 0
    added: int = 0
    removed: int = 0
    updated: int = 0
    compute_s: float = 0.0
    write_s: float = 0.0
    skipped: bool = False
    #: snapshots discarded because another writer changed the corpus before the apply
    conflicts: int = 0
    #: true when every attempt lost the race; the corpus is left dirty, not wrong
    stale: bool = False
    #: "full" (whole graph, fresh statistics) or "incremental" (pending pieces only)
    mode: str = ""
    #: pieces that chose again in an incremental update
    pending: int = 0


def _order_of(row: Any) -> str:
    """The content order of a piece row (``id``, ``text``, ``sha256``, ``doc_ord``)."""
    return content_order_key(row["text"] or "", row.get("sha256"), row.get("doc_ord"))


def content_ordered(rows: list[Any]) -> list[Any]:
    """Piece rows in content order, the order a full build breaks equal scores by: the same
    documents then give the same graph whatever the corpus name, paths or write order."""
    return sorted(rows, key=lambda r: (_order_of(r), r["id"]))


def _full_graph(
    rows: list[Any], k_graph: int, t_graph: float, stats: BM25Stats | None
) -> PieceGraph:
    return build_full([r["text"] or "" for r in rows], k_graph, t_graph, stats=stats)


def _edge_map(rows: list[Any], graph: PieceGraph) -> dict[tuple[str, str], float]:
    ids = [r["id"] for r in rows]
    out: dict[tuple[str, str], float] = {}
    for e in graph.edges:
        a, b = sorted((ids[e.a], ids[e.b]))
        out[(a, b)] = e.score
    return out


def desired_edges(
    rows: list[Any], k_graph: int, t_graph: float, stats: BM25Stats | None = None
) -> dict[tuple[str, str], float]:
    """The piece graph of ``rows`` (id, text, sha256, doc_ord) keyed by (smaller id, larger id):
    with their own statistics, or with ``stats`` (what an incremental sync must equal)."""
    rows = content_ordered(rows)
    return _edge_map(rows, _full_graph(rows, k_graph, t_graph, stats))


def frozen_stats(
    graph: GraphClient, corpus: str, texts: list[str] | None = None
) -> BM25Stats | None:
    """The corpus' frozen BM25 statistics (document frequencies of ``texts``' terms, or of every
    stored term), or None before its first full build."""
    row = graph.read("ingest/piece_graph_stats", corpus=corpus)[0]
    if not row["ready"]:
        return None
    if texts is None:
        rows = graph.read_raw(
            "MATCH (t:PieceTerm {corpus: $c}) RETURN t.term AS term, t.df AS df", c=corpus
        )
    else:
        terms = sorted({tok for text in texts for tok in bm25_tokens(text)})
        rows = graph.read("ingest/piece_term_dfs", corpus=corpus, terms=terms)
    return BM25Stats(
        n=int(row["n"]), avgdl=float(row["avgdl"]), df={r["term"]: int(r["df"]) for r in rows}
    )


class _Moved(Exception):
    """The corpus version moved past the snapshot: nothing more of this snapshot may land."""


def _locked_batch(
    tx: ManagedTransaction, corpus: str, version: int, statements: list[tuple[str, dict[str, Any]]]
) -> None:
    row = tx.run(cypher("ingest/corpus_graph_lock"), corpus=corpus).single()
    if row is None or row["version"] != version:
        raise _Moved()
    for name, params in statements:
        tx.run(cypher(name), params).consume()


def _choice_rows(rows: list[Any], graph: PieceGraph) -> list[dict[str, Any]]:
    ids = [r["id"] for r in rows]
    return [
        {
            "id": ids[u],
            "choices": [ids[v] for v, _ in c],
            "scores": [sc for _, sc in c],
            "terms": piece_terms(rows[u]["text"] or ""),
        }
        for u, c in enumerate(graph.choices)
    ]


def _apply_full(
    graph: GraphClient,
    corpus: str,
    version: int,
    rows: list[Any],
    built: PieceGraph,
    k_graph: int,
    t_graph: float,
) -> PieceGraphSync | None:
    """Write the diff, every piece's choices and the frozen statistics, then mark clean; or
    return None when the corpus moved past ``version``.

    Each batch is its own transaction (bounded memory for a first build of a large corpus) that
    locks the Corpus node and re-checks the version, so once a writer has landed no later batch
    of this snapshot can. Batches written before that were right for the corpus they saw; the
    statistics are marked ready only by the last batch, so the next sync (the writer's own)
    builds in full again rather than update a half-written build.
    """
    desired = _edge_map(rows, built)
    existing = {
        (r["a"], r["b"]): r["score"] for r in graph.read("ingest/similar_edges", corpus=corpus)
    }
    remove = [{"a": a, "b": b} for (a, b) in existing if (a, b) not in desired]
    upsert = [
        {"a": a, "b": b, "score": s}
        for (a, b), s in desired.items()
        if (a, b) not in existing or abs((existing[(a, b)] or 0.0) - s) > _SCORE_EPS
    ]
    added = sum(1 for r in upsert if (r["a"], r["b"]) not in existing)
    size = graph.batch_size
    build = uuid.uuid4().hex
    terms = [{"term": t, "df": df} for t, df in sorted(built.stats.df.items())]
    choices = _choice_rows(rows, built)
    key = corpus_key(corpus)
    steps: list[tuple[str, dict[str, Any]]] = [
        (
            "ingest/piece_graph_stats_begin",
            {
                "corpus": corpus,
                "n": built.stats.n,
                "avgdl": built.stats.avgdl,
                "k_graph": k_graph,
                "t_graph": t_graph,
                "build": build,
            },
        )
    ]
    steps += [
        ("ingest/delete_similar", {"rows": remove[i : i + size]})
        for i in range(0, len(remove), size)
    ]
    steps += [
        ("ingest/merge_similar", {"rows": upsert[i : i + size]})
        for i in range(0, len(upsert), size)
    ]
    steps += [
        ("ingest/set_piece_choices", {"rows": choices[i : i + size], "corpus_key": key})
        for i in range(0, len(choices), size)
    ]
    term_batch = max(size, 5000)
    steps += [
        (
            "ingest/merge_piece_terms",
            {"corpus": corpus, "build": build, "rows": terms[i : i + term_batch]},
        )
        for i in range(0, len(terms), term_batch)
    ]
    steps.append(("ingest/delete_stale_piece_terms", {"corpus": corpus, "build": build}))
    final: list[tuple[str, dict[str, Any]]] = [
        ("ingest/piece_graph_stats_ready", {"corpus": corpus, "build": build}),
        ("ingest/corpus_graph_clean", {"corpus": corpus, "edges": len(desired)}),
    ]
    try:
        for step in steps:
            graph.in_transaction(lambda tx, st=step: _locked_batch(tx, corpus, version, [st]))
        graph.in_transaction(lambda tx: _locked_batch(tx, corpus, version, final))
    except _Moved:
        return None
    return PieceGraphSync(
        edges=len(desired),
        added=added,
        removed=len(remove),
        updated=len(upsert) - added,
        mode="full",
    )


def _count(record: Any) -> int:
    return int(record[0] or 0) if record is not None else 0


def _stored(row: Any) -> StoredPiece:
    choices = row["choices"]
    scores = row["scores"]
    stored = None if choices is None else tuple(zip(choices, (float(x) for x in scores or ())))
    return StoredPiece(row["id"], row["text"] or "", stored, _order_of(row))


def _incremental(
    graph: GraphClient,
    corpus: str,
    version: int,
    stats_row: Any,
    k_graph: int,
    t_graph: float,
    candidates: int,
) -> PieceGraphSync | None:
    """Let the pending pieces choose and their candidates re-choose; apply in one transaction."""
    pending = [_stored(r) for r in graph.read("ingest/pending_pieces", corpus=corpus)]
    key = corpus_key(corpus)
    queries = []
    for piece in pending:
        words = fulltext_query(" ".join(sorted(set(bm25_tokens(piece.text)))))
        if words:
            queries.append({"id": piece.id, "q": f"+corpus_key:{key} +terms:({words})"})
    pools: dict[str, list[str]] = {}
    found: dict[str, StoredPiece] = {}
    order: dict[str, str] = {}
    size = max(graph.batch_size, 1)
    for start in range(0, len(queries), size):
        for row in graph.read(
            "ingest/piece_candidates",
            corpus=corpus,
            ix=own_prefix(graph, corpus),
            rows=queries[start : start + size],
            limit=candidates,
        ):
            pools[row["id"]] = [c["id"] for c in row["candidates"]]
            for c in row["candidates"]:
                found.setdefault(c["id"], _stored(c))
                for chosen in c["choice_order"]:
                    order[chosen["id"]] = _order_of(chosen)
    texts = [p.text for p in pending] + [c.text for c in found.values()]
    terms = sorted({tok for text in texts for tok in bm25_tokens(text)})
    dfs = graph.read("ingest/piece_term_dfs", corpus=corpus, terms=terms)
    stats = BM25Stats(
        n=int(stats_row["n"]),
        avgdl=float(stats_row["avgdl"]),
        df={r["term"]: int(r["df"]) for r in dfs},
    )
    update = update_choices(pending, found, pools, stats, k_graph, t_graph, order=order)
    choice_rows: list[dict[str, Any]] = [
        {"id": pid, "choices": [c for c, _ in ch], "scores": [sc for _, sc in ch]}
        for pid, ch in update.choices.items()
    ]
    upsert: list[dict[str, Any]] = [{"a": a, "b": b, "score": sc} for a, b, sc in update.upsert]
    drop: list[dict[str, Any]] = [{"a": a, "b": b} for a, b in update.maybe_drop]
    counts = {"created": 0, "deleted": 0}

    def work(tx: ManagedTransaction) -> None:
        row = tx.run(cypher("ingest/corpus_graph_lock"), corpus=corpus).single()
        if row is None or row["version"] != version:
            raise _Moved()
        for start in range(0, len(choice_rows), size):
            batch: list[dict[str, Any]] = choice_rows[start : start + size]
            tx.run(cypher("ingest/set_piece_choices"), rows=batch, corpus_key=key).consume()
        created = deleted = 0
        for start in range(0, len(upsert), size):
            batch = upsert[start : start + size]
            created += _count(tx.run(cypher("ingest/merge_similar_counted"), rows=batch).single())
        for start in range(0, len(drop), size):
            batch = drop[start : start + size]
            deleted += _count(tx.run(cypher("ingest/delete_unchosen_similar"), rows=batch).single())
        tx.run(
            cypher("ingest/corpus_graph_clean_delta"), corpus=corpus, delta=created - deleted
        ).consume()
        counts.update(created=created, deleted=deleted)

    try:
        graph.in_transaction(work)
    except _Moved:
        return None
    edges = graph.read_raw(
        "MATCH (co:Corpus {name: $c}) RETURN co.piece_graph_edges AS n", c=corpus
    )
    return PieceGraphSync(
        edges=int(edges[0]["n"] or 0) if edges else 0,
        added=counts["created"],
        removed=counts["deleted"],
        updated=len(upsert) - counts["created"],
        mode="incremental",
        pending=len(pending),
    )


def _needs_full(row: Any, k_graph: int, t_graph: float, rebuild_factor: float) -> bool:
    if not row["ready"] or row["k_graph"] != k_graph or row["t_graph"] != t_graph:
        return True
    frozen, now = int(row["n"] or 0), int(row["pieces"] or 0)
    return now > rebuild_factor * frozen or now * rebuild_factor < frozen


def sync_piece_graph(
    graph: GraphClient,
    corpus: str,
    k_graph: int,
    t_graph: float,
    *,
    force: bool = False,
    candidates: int = 100,
    rebuild_factor: float = 2.0,
) -> PieceGraphSync:
    """Bring the corpus' SIMILAR edges up to date; safe to run from concurrent ingests.

    ``force`` rebuilds the whole graph with fresh statistics even when nothing changed.
    """
    conflicts = 0
    compute_s = write_s = 0.0
    rebuild = force
    for _ in range(_ATTEMPTS):
        # version before pieces: a write committing in between makes the version check fail
        # (a harmless retry); the other order could pair an old snapshot with a new version
        state = graph.read("ingest/corpus_graph_state", corpus=corpus)
        if not state or (not rebuild and not state[0]["dirty"]):
            return PieceGraphSync(skipped=True, conflicts=conflicts)
        version = int(state[0]["version"])
        stats_row = graph.read("ingest/piece_graph_stats", corpus=corpus)[0]
        started = time.perf_counter()
        done: PieceGraphSync | None
        if rebuild or _needs_full(stats_row, k_graph, t_graph, rebuild_factor):
            rows = content_ordered(graph.read("ingest/piece_texts", corpus=corpus))
            built = _full_graph(rows, k_graph, t_graph, None)
            compute_s += time.perf_counter() - started
            started = time.perf_counter()
            done = _apply_full(graph, corpus, version, rows, built, k_graph, t_graph)
            write_s += time.perf_counter() - started
            n_pieces = len(rows)
        else:
            done = _incremental(graph, corpus, version, stats_row, k_graph, t_graph, candidates)
            compute_s += time.perf_counter() - started
            n_pieces = int(stats_row["pieces"] or 0)
        if done is not None:
            done.pieces, done.conflicts = n_pieces, conflicts
            done.compute_s, done.write_s = compute_s, write_s
            return done
        conflicts += 1
        rebuild = False  # the writer that moved the version marked the corpus dirty itself
    return PieceGraphSync(conflicts=conflicts, stale=True, compute_s=compute_s, write_s=write_s)
