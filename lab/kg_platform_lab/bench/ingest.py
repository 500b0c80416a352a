"""``kgp lab bench ingest``: end-to-end ingestion throughput against the embedder alone.

The embedder bounds ingestion, so the baselines are measured in the same run (before
and after the pipeline; the mean is used, because the machine's load drifts):

* ``ratio_vs_plain_text`` -- **the issue-14 target (>= 0.8)**: the model embedding each
  paragraph's text once, divided by the pipeline's wall time. It is what "ingestion costs about
  one pass of the model over the documents" means, whatever the pipeline embeds;
* ``ratio_vs_same_texts``: the model embedding exactly the texts the pipeline sends to it, over
  the pipeline's wall time: the overhead of everything else (planning, Neo4j writes, the piece
  graph), not counting how much text the design chooses to embed.

With ``entities=True`` (``--entities``) the same paragraphs are ingested twice more, each into a
corpus of its own: with the NLP distilled layer on (``distill.nlp_on_ingest``), then without it
again. ``entities_ratio`` = the with-run over the mean of the two runs without (one before, one
after, because the machine warms up) is the cost of the layer (issue 32's target: at most 1.3).
All runs share the warm model and server, so the difference is the NLP step.

With ``peer=True`` (``--peer``) the same paragraphs are also ingested by langchain-neo4j's
``Neo4jVector.from_texts`` (kg_platform_lab.bench.ingest_peer) and both graphs' sizes are reported.
The run ingests into a throw-away corpus on the configured Neo4j and deletes it, after an
untimed warm-up ingest of one question's paragraphs (a just-started server writes ~3x slower).
"""

from __future__ import annotations

import os
import resource
import time
import uuid
from pathlib import Path
from typing import Any

from kg_platform.config import Settings
from kg_platform.embedding import get_embedder
from kg_platform.errors import ConfigError
from kg_platform.graph.client import GraphClient, resolve_connection
from kg_platform_lab.bench.cpu import CpuClock, self_cpu_s
from kg_platform_lab.bench.ingest_peer import corpus_graph_size, run_langchain_peer
from kg_platform_lab.bench.layer import with_entity_layer, without_entity_layer
from kg_platform.ingest.embed import late_chunks, texts_to_embed
from kg_platform.ingest.pipeline import ingest_paths
from kg_platform.ingest.plan import SourceInput, SourcePlan, plan_source
from kg_platform_lab.qa_ingest import _paragraph_input, ingest_qa, read_questions
from kg_platform_lab.settings import LabSettings, get_lab_settings
from kg_platform.ingest.writer import drop_corpus
from kg_platform.segmenting.chunker import get_chunker


def default_qa_file(lab: LabSettings | None = None) -> Path:
    """The bench's HotpotQA dev file under the lab's ``bench_dir`` (``KGP_LAB__BENCH_DIR``)."""
    return (lab or get_lab_settings()).bench_dir / "dev" / "hotpotqa.jsonl"


def _peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)


def qa_slice_inputs(
    settings: Settings, qa_file: Path, limit: int, corpus: str
) -> list[SourceInput]:
    """The distinct paragraphs of the first ``limit`` questions, as ingestion inputs."""
    paragraphs: dict[str, SourceInput] = {}
    for q in read_questions(qa_file, limit):
        for para in q["paragraphs"]:
            paragraphs.setdefault(para["doc_id"], _paragraph_input(corpus, q["dataset"], para))
    return list(paragraphs.values())


def plain_texts(inputs: list[SourceInput]) -> list[str]:
    """Each input's sentences joined: the paragraph as plain text, embedded once."""
    return [
        " ".join(s for sec in inp.sections for sg in sec.segments for s in sg.sentences)
        for inp in inputs
    ]


def plan_inputs(settings: Settings, inputs: list[SourceInput]) -> list[SourcePlan]:
    """Plans of ``inputs`` with the configured segmenter, as the pipeline makes them."""
    seg = settings.segment
    chunker = get_chunker(settings)
    return [
        plan_source(
            inp,
            chunker,
            budget=seg.chunk_tokens,
            levels=seg.levels,
            min_piece_tokens=settings.tuning.segment.min_sentence_tokens,
        )
        for inp in inputs
    ]


def _baseline_texts(
    settings: Settings, qa_file: Path, limit: int, corpus: str
) -> tuple[list[str], list[str], list[dict[str, str]]]:
    """(texts the pipeline embeds, each paragraph's plain text, their titles and uris)."""
    inputs = qa_slice_inputs(settings, qa_file, limit, corpus)
    plans = plan_inputs(settings, inputs)
    skip_chunks: set[str] = set()
    skip_pieces: set[str] = set()
    if settings.tuning.ingest.piece_vectors == "late":
        # the late pass reads these chunks' texts once for the chunk and its pieces
        for _chunk, own in late_chunks(plans):
            skip_pieces.update(p.id for p in own)
    same = texts_to_embed(
        plans,
        settings.tuning.ingest.embed_higher_levels,
        settings.tuning.ingest.level1_vectors,
        skip_chunks,
        skip_pieces,
    )
    plain = plain_texts(inputs)
    meta = [{"title": inp.title, "uri": inp.uri} for inp in inputs]
    return same, plain, meta


def _warm_up(
    graph: GraphClient, settings: Settings, qa_file: Path, corpus: str, embedder: Any
) -> float:
    """Ingest the first question's paragraphs into a corpus of their own, then drop it, untimed.

    Why: the first writes after a server start run about 3x slower than the next ones (JIT, page
    cache, index structures; docs/scale.md), which would charge the pipeline for the server's
    start rather than for its work.
    """
    warm = f"{corpus}-warm-up"
    started = time.perf_counter()
    try:
        ingest_qa(graph, settings, qa_file, warm, limit=1, embedder=embedder)
    finally:
        drop_corpus(graph, warm)
    return time.perf_counter() - started


def _timed_embed(embedder: Any, texts: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) to embed ``texts``."""
    started, cpu = time.perf_counter(), self_cpu_s()
    embedder.embed(texts)
    return time.perf_counter() - started, self_cpu_s() - cpu


def run_ingest_bench(
    settings: Settings,
    *,
    limit: int = 20,
    qa_file: Path | None = None,
    documents: list[Path] | None = None,
    peer: bool = False,
    entities: bool = False,
) -> dict[str, Any]:
    """Embed-only baselines run before AND after the pipeline (the mean is used), because the
    machine's load drifts during a run. The pipeline runs without the NLP layer (``--entities``
    times it separately)."""
    settings = without_entity_layer(settings)
    qa_file = Path(qa_file or default_qa_file())
    embedder = get_embedder(settings.embedding)
    embedder.embed(["warm up the model"])
    corpus = f"bench-ingest-{uuid.uuid4().hex[:8]}"
    same, plain, meta = _baseline_texts(settings, qa_file, limit, corpus)
    n_paragraphs = len(plain)
    (same_before, _), (plain_before, plain_cpu_before) = (
        _timed_embed(embedder, same),
        _timed_embed(embedder, plain),
    )
    out: dict[str, Any] = {
        "qa_file": str(qa_file),
        "questions": limit,
        "corpus": corpus,
        "embedder": f"{settings.embedding.provider}:{settings.embedding.model}"
        f" ({getattr(embedder, 'quantize', 'none')})",
        "segmenter": settings.segment.segmenter,
        "level1_vectors": settings.tuning.ingest.level1_vectors,
        "pipeline_batches": settings.tuning.ingest.pipeline_batches,
    }
    with GraphClient.from_settings(settings) as graph:
        out["warm_up_s"] = round(_warm_up(graph, settings, qa_file, corpus, embedder), 2)
        clock = CpuClock(resolve_connection(settings)[0])
        try:
            started = time.perf_counter()
            clock.start()
            report = ingest_qa(graph, settings, qa_file, corpus, limit=limit, embedder=embedder)
            clock.stop()
            wall = time.perf_counter() - started
            out["status"] = report.status
            out["graph"] = corpus_graph_size(graph, corpus)
            pipeline_rss = _peak_rss_mb()  # before the peer runs in this process
            if entities:
                out["entities"] = _with_entity_layer(
                    graph, settings, embedder, qa_file, corpus, limit, wall
                )
            if peer:
                out["peer"] = run_langchain_peer(settings, graph, embedder, plain, meta, corpus)
            doc_part: dict[str, Any] = {}
            if documents:
                started = time.perf_counter()
                doc_report = ingest_paths(graph, settings, documents, corpus, embedder=embedder)
                doc_wall = time.perf_counter() - started
                doc_part = {
                    "documents": len(doc_report.added),
                    "documents_s": round(doc_wall, 2),
                    "documents_chunks": doc_report.counts.get("chunks", 0),
                    "documents_pieces": doc_report.counts.get("pieces", 0),
                    "documents_phase_s": doc_report.timings,
                    "documents_errors": [e.model_dump() for e in doc_report.errors],
                }
        finally:
            drop_corpus(graph, corpus)
    (same_after, _), (plain_after, plain_cpu_after) = (
        _timed_embed(embedder, same),
        _timed_embed(embedder, plain),
    )
    same_s, plain_s = (same_before + same_after) / 2, (plain_before + plain_after) / 2
    plain_cpu = (plain_cpu_before + plain_cpu_after) / 2
    busy = clock.self_s + clock.neo4j_s if clock.neo4j_s is not None else None
    sources = len(report.added) + len(report.replaced)
    out.update(
        {
            "sources": sources,
            "chunks": report.counts.get("chunks", 0),
            "pieces": report.counts.get("pieces", 0),
            "tokens": report.tokens,
            "texts_embedded": report.texts_embedded,
            "similar_edges": report.counts.get("similar_edges", 0),
            "pipeline_s": round(wall, 2),
            "phase_s": report.timings,
            "documents_per_s": round(sources / wall, 2),
            "chunks_per_s": round(report.counts.get("chunks", 0) / wall, 2),
            "pieces_per_s": round(report.counts.get("pieces", 0) / wall, 2),
            "embed_only_same_texts": len(same),
            "embed_only_same_texts_s": [round(same_before, 2), round(same_after, 2)],
            "embed_only_plain_text_s": [round(plain_before, 2), round(plain_after, 2)],
            "ceiling_documents_per_s": round(n_paragraphs / same_s, 2),
            "plain_documents_per_s": round(n_paragraphs / plain_s, 2),
            "ratio_vs_plain_text": round(plain_s / wall, 3),
            "ratio_vs_same_texts": round(same_s / wall, 3),
            "target": "ratio_vs_plain_text >= 0.8 (issue 14: the pipeline vs the model embedding "
            "each paragraph once)",
            "peak_rss_mb": pipeline_rss,
            "cpu_cores": os.cpu_count(),
            "cpu_s": {
                "pipeline_process": round(clock.self_s, 2),
                "neo4j": round(clock.neo4j_s, 2) if clock.neo4j_s is not None else None,
                "embed_only_plain_text": round(plain_cpu, 2),
            },
            # If every core were busy all the time, the pipeline could not beat its own CPU
            # seconds; against the plain embedding's, that bounds ratio_vs_plain_text here.
            "ratio_ceiling_cpu": round(plain_cpu / busy, 3) if busy else None,
            **doc_part,
        }
    )
    if "peer" in out and out["peer"].get("documents_per_s"):
        out["peer"]["our_documents_per_s_over_peer"] = round(
            out["documents_per_s"] / out["peer"]["documents_per_s"], 3
        )
    return out


def _with_entity_layer(
    graph: GraphClient,
    settings: Settings,
    embedder: Any,
    qa_file: Path,
    corpus: str,
    limit: int,
    without_s: float,
) -> dict[str, Any]:
    """The same paragraphs ingested with the NLP distilled layer on, then once more without it
    (each into a corpus of its own, dropped after), timed against ``without_s`` and the second
    run without it."""
    from kg_platform.distilling.nlp import nlp_available

    if not nlp_available(settings.distill.nlp_model):
        raise ConfigError(
            f"--entities needs spaCy and the pipeline {settings.distill.nlp_model!r}",
            hint="pip install 'kg-platform[nlp]'",
        )
    with_layer = with_entity_layer(settings)

    def timed(run_settings: Settings, name: str) -> tuple[float, Any]:
        try:
            started = time.perf_counter()
            report = ingest_qa(graph, run_settings, qa_file, name, limit=limit, embedder=embedder)
            return time.perf_counter() - started, report
        finally:
            drop_corpus(graph, name)

    with_s, report = timed(with_layer, f"{corpus}-entities")
    again_s, _ = timed(settings, f"{corpus}-again")
    base_s = (without_s + again_s) / 2
    return {
        "status": report.status,
        "with_s": round(with_s, 2),
        "without_s": [round(without_s, 2), round(again_s, 2)],
        "entities_ratio": round(with_s / base_s, 3),
        "target": "entities_ratio <= 1.3 (issue 32)",
        "phase_s": report.timings,
        "counts": {k: v for k, v in report.counts.items() if k.startswith("entity")},
    }


def format_ingest_bench(out: dict[str, Any]) -> list[str]:
    """The human-readable report of :func:`run_ingest_bench` (``--json`` prints ``out``)."""
    lines = [
        f"{out['sources']} sources ({out['questions']} questions of {Path(out['qa_file']).name}), "
        f"{out['chunks']} chunks, {out['pieces']} pieces, {out['texts_embedded']} texts "
        f"embedded; embedder {out['embedder']}, level-1 vectors from {out['level1_vectors']}",
        f"pipeline        {out['pipeline_s']:>8} s  {out['documents_per_s']:>8} docs/s  "
        f"{out['pieces_per_s']:>8} pieces/s  peak RSS {out['peak_rss_mb']} MB",
        f"phases (busy s, embed and write overlap): {out['phase_s']}",
        f"embed-only, each paragraph once: {out['embed_only_plain_text_s']} s "
        f"({out['plain_documents_per_s']} docs/s)",
        f"embed-only, the pipeline's texts: {out['embed_only_same_texts_s']} s "
        f"({out['embed_only_same_texts']} texts, {out['ceiling_documents_per_s']} docs/s)",
        f"ratio vs embedding each paragraph once (TARGET >= 0.8): {out['ratio_vs_plain_text']}",
        f"ratio vs embedding the pipeline's own texts (overhead only): "
        f"{out['ratio_vs_same_texts']}",
        f"CPU s while ingesting: this process {out['cpu_s']['pipeline_process']}, Neo4j "
        f"{out['cpu_s']['neo4j'] if out['cpu_s']['neo4j'] is not None else 'not local'}; "
        f"embedding each paragraph once {out['cpu_s']['embed_only_plain_text']} "
        f"({out['cpu_cores']} cores)",
        f"ratio ceiling with every core busy (plain embedding CPU / pipeline CPU): "
        f"{out['ratio_ceiling_cpu']}",
    ]
    graph = out.get("graph")
    if graph:
        lines.append(
            f"kg-platform graph: {graph['nodes']} nodes, {graph['relationships']} "
            f"relationships, {graph['vectors']} vectors"
        )
        lines.append(f"  nodes {graph['nodes_by_label']}")
        lines.append(f"  relationships {graph['relationships_by_type']}")
    peer = out.get("peer")
    if peer:
        lines.append(
            f"peer ({peer['peer']}): {peer['peer_s']} s, {peer['documents_per_s']} "
            f"docs/s; {peer['nodes']} nodes, {peer['relationships']} relationships, "
            f"{peer['vectors']} vectors; ours/peer docs/s "
            f"{peer.get('our_documents_per_s_over_peer')}"
        )
        lines.append(f"  peer stores {peer['stores']}")
    ent = out.get("entities")
    if ent:
        lines.append(
            f"with the NLP layer: {ent['with_s']} s against {ent['without_s']} s without "
            f"(before, after), ratio {ent['entities_ratio']} (TARGET <= 1.3); {ent['counts']}"
        )
        lines.append(f"  phases with the layer: {ent['phase_s']}")
    for key in ("documents", "documents_s", "documents_errors"):
        if key in out:
            lines.append(f"{key}: {out[key]}")
    return lines
