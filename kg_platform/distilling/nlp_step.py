"""The NLP extractor as a distillation step: pending chunks -> Entity / MENTIONED_IN / RELATES.

It writes the graph the LLM's ``entities`` step writes (same resolution, same Cypher, same
``entities_v`` marker, with ``by: 'nlp'`` on nodes, mentions and relations), so retrieval and the
Browser read one distilled layer whichever extractor filled it, and switching extractors
re-extracts every chunk (the markers differ: ``nlp@2`` vs the prompt's ``entities@N``).

Work goes source by source (a concept counts only where it recurs in its source), a batch of
sources per transaction: clear the chunks' old mentions, write, mark (``write_chunk_facts``), so a
crash leaves each chunk as it was or done, and a re-run picks up exactly the chunks left.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from kg_platform._faults import fault_point
from kg_platform.config import Settings
from kg_platform.distilling.common import MARKERS, ChunkRow, StepReport, pending_chunks
from kg_platform.distilling.entities import EntityResolver, Mention, write_chunk_facts
from kg_platform.distilling.nlp import VERSION, extract_texts, load_pipeline, nlp_available
from kg_platform.embedding import Embedder
from kg_platform.errors import ConfigError
from kg_platform.graph import GraphClient

log = logging.getLogger(__name__)

BY = "nlp"


def resolve_extractor(settings: Settings, override: str | None = None) -> str:
    """``nlp`` or ``llm``: the setting (or ``override``), ``auto`` read as ``llm`` with an LLM
    configured, else ``nlp`` when spaCy and the pipeline are installed, else ``llm`` (whose
    steps then skip with the no-LLM note)."""
    choice = override or settings.distill.extractor
    if choice not in ("auto", "nlp", "llm"):
        raise ConfigError(f"unknown extractor {choice!r}", hint="choose one of auto, nlp, llm")
    if choice != "auto":
        return choice
    if settings.llm.configured:
        return "llm"
    return "nlp" if nlp_available(settings.distill.nlp_model) else "llm"


def extract_entities_nlp(
    graph: GraphClient,
    embedder: Embedder,
    settings: Settings,
    *,
    corpus: str,
    source_ids: list[str] | None = None,
    echo: Callable[[str], None] | None = None,
) -> StepReport:
    """Entities and relations of every pending chunk of ``corpus`` from spaCy; resumable and
    idempotent (a chunk already at :data:`VERSION` is not parsed again)."""
    cfg = settings.distill
    report = StepReport("entities")
    report.timings = {"load": 0.0, "parse": 0.0, "resolve_write": 0.0}
    nlp = None  # loaded at the first pending batch: a run with nothing to do costs no load
    resolver = EntityResolver(graph, embedder, corpus, cfg.entity_merge_cos)
    marker = MARKERS["entities"]
    failed: list[str] = []
    started = time.perf_counter()
    while True:
        recs = graph.read(
            "distill/pending_sources",
            corpus=corpus,
            levels=cfg.levels,
            marker=marker,
            version=VERSION,
            source_ids=source_ids,
            exclude=failed,
            limit=cfg.nlp_batch_chunks,
        )
        group: list[str] = []
        size = 0
        for r in recs:
            if group and size + int(r["chunks"]) > cfg.nlp_batch_chunks:
                break
            group.append(r["source_id"])
            size += int(r["chunks"])
        if not group:
            break
        rows: list[ChunkRow] = []
        for batch in pending_chunks(
            graph,
            corpus=corpus,
            levels=cfg.levels,
            step="entities",
            version=VERSION,
            source_ids=group,
            batch=max(size, 1),
        ):
            rows.extend(batch)
        if nlp is None:
            t0 = time.perf_counter()
            nlp = load_pipeline(cfg.nlp_model)
            report.timings["load"] = time.perf_counter() - t0
        fault_point("entities")  # the fault suite kills here: between two committed batches
        try:
            written, related = _extract_and_write(
                graph, nlp, resolver, settings, corpus, rows, report.timings
            )
        except Exception as exc:  # noqa: BLE001 - one bad batch must not stop the corpus
            log.warning("NLP extraction failed for sources %s: %s", group, exc)
            failed.extend(group)
            report.failed.extend(r.id for r in rows)
            report.errors.append(f"{group[0]}..: {type(exc).__name__}: {exc}")
            continue
        report.chunks += len(rows)
        report.written += written
        report.relations += related
        if echo and report.chunks and report.chunks % (cfg.nlp_batch_chunks * 8) < len(rows):
            echo(f"nlp entities: {report.chunks} chunks, {time.perf_counter() - started:.0f}s")
    graph.write("distill/drop_orphan_entities", corpus=corpus)
    return report


def _extract_and_write(
    graph: GraphClient,
    nlp: object,
    resolver: EntityResolver,
    settings: Settings,
    corpus: str,
    rows: list[ChunkRow],
    timings: dict[str, float],
) -> tuple[int, int]:
    cfg = settings.distill
    t0 = time.perf_counter()
    outs = extract_texts(
        nlp,
        [r.text for r in rows],
        [r.source_id for r in rows],
        titles=[r.source_title for r in rows],
        min_concept_mentions=cfg.nlp_min_concept_mentions,
        max_mentions=cfg.nlp_max_entities,
    )
    per_chunk = [
        (row, [Mention(m.key, m.name, m.type, "") for m in out.mentions], out.relations)
        for row, out in zip(rows, outs)
    ]
    t1 = time.perf_counter()
    timings["parse"] += t1 - t0
    done = write_chunk_facts(graph, resolver, corpus, per_chunk, version=VERSION, by=BY)
    timings["resolve_write"] += time.perf_counter() - t1
    return done


__all__ = ["BY", "extract_entities_nlp", "resolve_extractor"]
