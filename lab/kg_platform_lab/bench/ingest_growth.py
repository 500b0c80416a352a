"""``kgp lab bench ingest-growth``: the cost of adding one source as the corpus grows.

A seed corpus (paragraphs of a QA file) is ingested once, then replicated (ids suffixed per copy,
embeddings copied, no model call) into a throw-away corpus until it holds each target number of
pieces. At every size ``add`` new paragraphs are ingested one run each, the way a scheduled job
adds documents, and the run's wall time is printed next to the time the embedder spent on the
same texts in the same run (the ceiling no writer can beat) and next to the piece-graph sync.
A per-source cost that grows with the corpus, while the embed time does not, is the piece graph.

The replicas get the piece-graph state an incremental sync works from without an all-pairs build
(quadratic: hours at a million pieces): the seed's frozen BM25 statistics scaled to the number of
copies (exactly what the replicated corpus has: n and every df times the copies, the same mean
length) and each copy's choices and SIMILAR edges within the copy. That state is consistent
(choices and edges agree, nothing pending) though not the full build of the replicated corpus,
whose every piece would choose its own twins; the added sources then run the real incremental
update: fulltext candidates among all copies, frozen document frequencies, one transaction.
``full_build_s`` is the Python time of the all-pairs build the incremental update avoids, measured
up to ``full_build_max`` pieces.
"""

from __future__ import annotations

import math
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from kg_platform.config import Settings
from kg_platform.corpus_name import corpus_key
from kg_platform.embedding import get_embedder
from kg_platform.graph.client import GraphClient
from kg_platform_lab.bench.ingest import default_qa_file
from kg_platform_lab.bench.layer import without_entity_layer
from kg_platform.ingest.pipeline import ingest_paths
from kg_platform_lab.qa_ingest import ingest_qa, read_questions
from kg_platform.granularity.piece_graph import build_full
from kg_platform.ingest.similar import frozen_stats
from kg_platform.ingest.writer import drop_corpus

_LABELS = ("Piece", "Chunk", "Section", "Source")


def _drop_replicas(graph: GraphClient, corpus: str) -> None:
    """Delete the replicated nodes in bounded transactions (labels are our constants)."""
    for label in _LABELS:
        while graph.write_raw(
            f"MATCH (n:{label} {{corpus: $c}}) WITH n LIMIT 5000 "
            "DETACH DELETE n RETURN count(*) AS n",
            c=corpus,
        )[0]["n"]:
            pass
    graph.write("ingest/delete_corpus_meta", corpus=corpus)


def _new_paragraphs(qa_file: Path, skip_questions: int, n: int) -> list[tuple[str, str]]:
    """(title, text) of ``n`` paragraphs from questions after the seed's."""
    out: dict[str, tuple[str, str]] = {}
    for i, q in enumerate(read_questions(qa_file)):
        if i < skip_questions:
            continue
        for para in q["paragraphs"]:
            text = " ".join(para.get("sentences") or []) or str(para.get("text") or "")
            if text.strip():
                out.setdefault(para["doc_id"], (str(para.get("title") or "untitled"), text))
        if len(out) >= n:
            break
    return list(out.values())[:n]


def _point_choices(graph: GraphClient, rows: list[dict[str, Any]], key: str) -> None:
    graph.write_raw(
        "UNWIND $rows AS r MATCH (p:Piece {id: r.id}) "
        "SET p.sim_choices = r.choices, p.corpus_key = $key",
        rows=rows,
        key=key,
    )


def _freeze_replicas(
    graph: GraphClient,
    seed: str,
    corpus: str,
    copies: range,
    total_copies: int,
    seed_rows: list[dict[str, Any]],
) -> None:
    """Scaled frozen statistics for the whole replicated corpus; choices for the new copies."""
    stats = frozen_stats(graph, seed)
    if stats is None:
        raise RuntimeError(f"the seed corpus {seed!r} has no piece-graph statistics")
    pg_row = graph.read("ingest/piece_graph_stats", corpus=seed)[0]
    build = uuid.uuid4().hex
    graph.write(
        "ingest/piece_graph_stats_begin",
        corpus=corpus,
        n=stats.n * total_copies,
        avgdl=stats.avgdl,
        k_graph=pg_row["k_graph"],
        t_graph=pg_row["t_graph"],
        build=build,
    )
    terms = [{"term": t, "df": df * total_copies} for t, df in sorted(stats.df.items())]
    for i in range(0, len(terms), 5000):
        graph.write(
            "ingest/merge_piece_terms", corpus=corpus, build=build, rows=terms[i : i + 5000]
        )
    graph.write("ingest/delete_stale_piece_terms", corpus=corpus, build=build)
    graph.write("ingest/piece_graph_stats_ready", corpus=corpus, build=build)
    # the copied choices name the seed's pieces: point them into the copy, by id (a scan of the
    # corpus per copy made this quadratic: ~20 min of scans at a million pieces)
    key = corpus_key(corpus)
    seed_pieces = [(p["id"], p.get("sim_choices") or []) for p in seed_rows]
    rows: list[dict[str, Any]] = []
    for copy in copies:
        suffix = f"~{copy}"
        rows.extend(
            {"id": pid + suffix, "choices": [x + suffix for x in choices]}
            for pid, choices in seed_pieces
        )
        if len(rows) >= 5000:
            _point_choices(graph, rows, key)
            rows = []
    if rows:
        _point_choices(graph, rows, key)
    edges = graph.read_raw(
        "MATCH (:Piece {corpus: $c})-[r:SIMILAR]->() RETURN count(r) AS n", c=corpus
    )[0]["n"]
    graph.write_raw(
        "MATCH (co:Corpus {name: $c}) SET co.piece_graph_dirty = false, co.piece_graph_edges = $n",
        c=corpus,
        n=edges,
    )


def run_growth_bench(
    settings: Settings,
    *,
    sizes: list[int],
    add: int = 5,
    seed_questions: int = 10,
    qa_file: Path | None = None,
    full_build_max: int = 20_000,
) -> dict[str, Any]:
    from kg_platform_lab.bench.retrieval import _copy, _read_corpus

    settings = without_entity_layer(settings)  # the pipeline's cost per source, as measured
    qa_file = Path(qa_file or default_qa_file())
    embedder = get_embedder(settings.embedding)
    embedder.embed(["warm up the model"])
    tag = uuid.uuid4().hex[:8]
    seed, corpus = f"bench-growth-seed-{tag}", f"bench-growth-{tag}"
    pg = settings.tuning.piece_graph
    rows: list[dict[str, Any]] = []
    with GraphClient.from_settings(settings) as graph, tempfile.TemporaryDirectory() as tmp:
        try:
            ingest_qa(graph, settings, qa_file, seed, limit=seed_questions, embedder=embedder)
            data = _read_corpus(settings, seed)
            per_copy = len(data["nodes"]["Piece"])
            copies_done = 0
            paragraphs = _new_paragraphs(qa_file, seed_questions, add * len(sizes))
            graph.write("ingest/mark_corpus_dirty", corpus=corpus)
            for step, size in enumerate(sorted(sizes)):
                need = max(math.ceil(size / per_copy), 1)
                if need > copies_done:
                    _copy(graph, data, range(copies_done, need), corpus)
                    _freeze_replicas(
                        graph,
                        seed,
                        corpus,
                        range(copies_done, need),
                        need,
                        data["nodes"]["Piece"],
                    )
                    copies_done = need
                pieces = graph.read_raw(
                    "MATCH (p:Piece {corpus: $c}) RETURN count(p) AS n", c=corpus
                )[0]["n"]
                full_s = None
                if pieces <= full_build_max:
                    texts = [r["text"] for r in graph.read("ingest/piece_texts", corpus=corpus)]
                    started = time.perf_counter()
                    build_full(texts, pg.k_graph, pg.t_graph)
                    full_s = round(time.perf_counter() - started, 2)
                walls, embeds, graphs, modes = [], [], [], []
                for j, (title, text) in enumerate(paragraphs[step * add : (step + 1) * add]):
                    path = Path(tmp) / f"add-{step}-{j}.md"
                    path.write_text(f"# {title}\n\n{text}\n", encoding="utf-8")
                    started = time.perf_counter()
                    report = ingest_paths(graph, settings, [path], corpus, embedder=embedder)
                    walls.append(time.perf_counter() - started)
                    embeds.append(report.timings.get("embed", 0.0))
                    graphs.append(report.timings.get("piece_graph", 0.0))
                    modes.append(report.piece_graph_mode)
                wall, emb = statistics.median(walls), statistics.median(embeds)
                rows.append(
                    {
                        "pieces": pieces,
                        "full_build_s": full_s,
                        "sync_modes": sorted(set(modes)),
                        "per_source_s": round(wall, 3),
                        "embed_only_s": round(emb, 3),
                        "piece_graph_s": round(statistics.median(graphs), 3),
                        "ratio_vs_embed": round(wall / emb, 1) if emb > 0 else None,
                    }
                )
        finally:
            _drop_replicas(graph, corpus)
            drop_corpus(graph, seed)
    base = rows[0]["per_source_s"] if rows else None
    for r in rows:
        r["ratio_vs_smallest"] = round(r["per_source_s"] / base, 2) if base else None
    return {"qa_file": str(qa_file), "added_per_size": add, "sizes": rows}
