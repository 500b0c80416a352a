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
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass

from kg_platform._faults import fault_point
from kg_platform.config import Settings
from kg_platform.distilling.common import MARKERS, PendingChunk, StepReport, pending_chunks
from kg_platform.distilling.entities import EntityResolver, Mention, write_chunk_facts
from kg_platform.distilling.nlp import NlpExtraction, nlp_available, version
from kg_platform.distilling.nlp_parser import NlpParser, ParseRequest
from kg_platform.embedding import Embedder
from kg_platform.embedding.base import quantized_embedder
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
    parser: NlpParser | None = None,
) -> StepReport:
    """Entities and relations of every pending chunk of ``corpus`` from spaCy; resumable and
    idempotent (a chunk already at the layer's marker, :func:`~kg_platform.distilling.nlp.version`
    of ``distill.relations``, is not parsed again; switching the setting redoes every chunk).

    A two-stage pipeline: while this process resolves and writes one batch of sources, the
    ``parser`` (a child process, :mod:`~kg_platform.distilling.nlp_parser`) parses the next.
    Pass a started parser to have its pipeline loaded ahead (ingestion does); otherwise one is
    started here and closed at the end."""
    cfg = settings.tuning.distill
    report = StepReport("entities")
    report.timings = {"parse_wait": 0.0, "resolve_write": 0.0}
    names = quantized_embedder(embedder, settings.embedding, cfg.name_quantize)
    resolver = EntityResolver(graph, names, corpus, cfg.entity_merge_cos)
    own_parser = parser is None
    first_limit = max(1, cfg.nlp_batch_chunks // 4)
    failed: list[str] = []
    inflight: deque[_Batch] = deque()
    started = time.perf_counter()
    try:
        while True:
            # keep one batch parsing ahead of the one being written
            while len(inflight) < 2:
                # the first batch is small: nothing overlaps its parse, so it should be short
                limit = cfg.nlp_batch_chunks if report.chunks or inflight else first_limit
                batch = _next_batch(graph, settings, corpus, source_ids, failed, inflight, limit)
                if batch is None:
                    break
                if parser is None:
                    parser = NlpParser(
                        settings.distill.nlp_model,
                        in_child=cfg.nlp_parse_process,
                        relations=settings.distill.relations,
                    ).start()
                batch.parsed = parser.submit(batch.request)
                inflight.append(batch)
            if not inflight:
                break
            batch = inflight.popleft()
            fault_point("entities")  # the fault suite kills here: between two committed batches
            assert parser is not None and batch.parsed is not None  # set when it was queued
            try:
                t0 = time.perf_counter()
                outs = parser.result(batch.parsed, batch.request)
                t1 = time.perf_counter()
                report.timings["parse_wait"] += t1 - t0  # not the parse's CPU: it overlaps writing
                per_chunk = [
                    (row, [Mention(m.key, m.name, m.type, "") for m in out.mentions], out.relations)
                    for row, out in zip(batch.rows, outs)
                ]
                written, related = write_chunk_facts(
                    graph,
                    resolver,
                    corpus,
                    per_chunk,
                    version=version(settings.distill.relations),
                    by=BY,
                )
                report.timings["resolve_write"] += time.perf_counter() - t1
            except ConfigError:
                raise  # no pipeline: every batch would fail the same way; the hint says why
            except Exception as exc:  # noqa: BLE001 - one bad batch must not stop the corpus
                log.warning("NLP extraction failed for sources %s: %s", batch.sources, exc)
                failed.extend(batch.sources)
                report.failed.extend(r.id for r in batch.rows)
                report.errors.append(f"{batch.sources[0]}..: {type(exc).__name__}: {exc}")
                continue
            report.chunks += len(batch.rows)
            report.written += written
            report.relations += related
            if echo and report.chunks % (cfg.nlp_batch_chunks * 8) < len(batch.rows):
                echo(f"nlp entities: {report.chunks} chunks, {time.perf_counter() - started:.0f}s")
    finally:
        if own_parser and parser is not None:
            parser.close()
    graph.write("distill/drop_orphan_entities", corpus=corpus)
    return report


@dataclass
class _Batch:
    """Whole sources whose pending chunks are parsed and written together."""

    sources: list[str]
    rows: list[PendingChunk]
    request: ParseRequest
    parsed: Future[list[NlpExtraction]] | None = None


def _next_batch(
    graph: GraphClient,
    settings: Settings,
    corpus: str,
    source_ids: list[str] | None,
    failed: list[str],
    inflight: deque[_Batch],
    limit: int,
) -> _Batch | None:
    """The next sources with pending chunks, up to ``limit`` chunks (a bigger source alone),
    skipping sources that failed in this run or are in flight; None when done."""
    cfg = settings.tuning.distill
    recs = graph.read(
        "distill/pending_sources",
        corpus=corpus,
        levels=cfg.levels,
        marker=MARKERS["entities"],
        version=version(settings.distill.relations),
        source_ids=source_ids,
        exclude=failed + [s for b in inflight for s in b.sources],
        limit=limit,
    )
    group: list[str] = []
    size = 0
    for r in recs:
        if group and size + int(r["chunks"]) > limit:
            break
        group.append(r["source_id"])
        size += int(r["chunks"])
    if not group:
        return None
    rows: list[PendingChunk] = []
    for chunk_rows in pending_chunks(
        graph,
        corpus=corpus,
        levels=cfg.levels,
        step="entities",
        version=version(settings.distill.relations),
        source_ids=group,
        batch=max(size, 1),
    ):
        rows.extend(chunk_rows)
    request = ParseRequest(
        texts=[r.text for r in rows],
        groups=[r.source_id for r in rows],
        titles=[r.source_title for r in rows],
        min_concept_mentions=cfg.nlp_min_concept_mentions,
        max_mentions=cfg.nlp_max_entities,
        relations=settings.distill.relations,
    )
    return _Batch(group, rows, request)


__all__ = ["BY", "extract_entities_nlp", "resolve_extractor"]
