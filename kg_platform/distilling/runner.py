"""Running the distilled-knowledge steps over a corpus, and undoing them for one source.

``distill_corpus`` is what ``kgp distill`` and ``kgp ingest --distill`` call: it runs the chosen
steps (``atomic``, ``entities``, ``tags``) over every chunk still pending, sums LLM usage in one
meter, and reports tokens per 1k corpus tokens. Without an LLM it skips every step with one
clear message (issue item 7) and returns a report saying so. ``remove_source_distillation`` is
what the ingestion path calls before a changed source is re-written or a vanished one pruned.

One distillation per corpus at a time: ``distill_corpus`` holds the Neo4j lock
``distill:<corpus>`` (a :class:`~kg_platform.graph.lock.JobLock`, leased and renewed, reclaimed at
once from a dead process of this host). Two runs would otherwise pay the LLM twice for the same
pending chunks and race on entity MERGEs; the loser raises :class:`JobLocked` (``kgp distill``
exits 3) and writes nothing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kg_platform.config import Settings
from kg_platform.embedding import Embedder
from kg_platform.errors import ConfigError
from kg_platform.graph import GraphClient
from kg_platform.llm import LLMClient

log = logging.getLogger(__name__)

STEPS = ("atomic", "entities", "tags")
NO_LLM_MESSAGE = (
    "no LLM configured: skipping the distilled-knowledge layer ({steps}); "
    "retrieval works without it. Set KGP_LLM__BASE_URL and KGP_LLM__MODEL, then "
    "run `kgp distill --corpus {corpus}`."
)


@dataclass
class DistillReport:
    corpus: str
    steps: list[str]
    skipped: str | None = None  # why nothing ran (no LLM)
    extractor: str = "llm"  # who ran the entities step: 'llm' | 'nlp'
    skipped_steps: list[str] = field(default_factory=list)  # LLM steps skipped without an LLM
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    usage: dict[str, Any] = field(default_factory=dict)
    corpus_tokens: int = 0
    duration_s: float = 0.0

    @property
    def tokens_per_1k_corpus_tokens(self) -> float | None:
        total = self.usage.get("total_tokens", 0)
        return round(1000.0 * total / self.corpus_tokens, 1) if self.corpus_tokens else None

    @property
    def failed(self) -> int:
        return sum(int(r.get("failed", 0)) for r in self.results.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "corpus": self.corpus,
            "steps": self.steps,
            "skipped": self.skipped,
            "skipped_steps": self.skipped_steps,
            "extractor": self.extractor,
            "results": self.results,
            "usage": self.usage,
            "corpus_tokens": self.corpus_tokens,
            "tokens_per_1k_corpus_tokens": self.tokens_per_1k_corpus_tokens,
            "duration_s": round(self.duration_s, 2),
        }


def parse_steps(steps: str | list[str] | None, settings: Settings) -> list[str]:
    if steps is None:
        chosen = list(settings.distill.steps)
    elif isinstance(steps, str):
        chosen = [s.strip() for s in steps.split(",") if s.strip()]
    else:
        chosen = list(steps)
    unknown = [s for s in chosen if s not in STEPS]
    if unknown:
        raise ConfigError(
            f"unknown distillation step(s): {', '.join(unknown)}",
            hint=f"choose from {', '.join(STEPS)} (comma-separated)",
        )
    return [s for s in STEPS if s in chosen]  # canonical order


def distill_corpus(
    graph: GraphClient,
    embedder: Embedder,
    llm: LLMClient | None,
    settings: Settings,
    *,
    corpus: str,
    steps: str | list[str] | None = None,
    source_ids: list[str] | None = None,
    echo: Callable[[str], None] | None = None,
    extractor: str | None = None,
) -> DistillReport:
    """Run the distillation steps over the pending chunks of ``corpus`` (or of ``source_ids``).

    ``extractor`` (default ``settings.distill.extractor``) decides who runs the ``entities``
    step: ``nlp`` (spaCy, no LLM) or ``llm``; ``auto`` is ``llm`` when one is configured. With
    ``nlp`` named explicitly and no ``steps``, only ``entities`` runs. The other steps need the
    LLM and are skipped with a note without one."""
    from kg_platform.distilling.nlp_step import resolve_extractor

    mode = resolve_extractor(settings, extractor)
    if steps is None and extractor == "nlp":
        steps = ["entities"]
    chosen = parse_steps(steps, settings)
    report = DistillReport(corpus=corpus, steps=chosen, extractor=mode)
    if not chosen:
        return report
    nlp_steps = ["entities"] if mode == "nlp" and "entities" in chosen else []
    llm_steps = [s for s in chosen if s not in nlp_steps]
    if llm is None and llm_steps:
        note = NO_LLM_MESSAGE.format(steps=", ".join(llm_steps), corpus=corpus)
        (echo or log.warning)(note)
        report.skipped_steps = llm_steps
        if not nlp_steps:
            report.skipped = note
            return report
        llm_steps = []
    from kg_platform.errors import JobLocked
    from kg_platform.graph.lock import JobLock

    lock = JobLock(graph, distill_lock_name(corpus), lease_s=settings.tuning.jobs.lease_s)
    if not lock.acquire():
        raise JobLocked(
            f"a distillation of corpus {corpus!r} is already running (lock held by {lock.holder})",
            hint="wait for it to finish (it covers the same pending chunks); a crashed holder's "
            "lock is taken over at once on the same host, else after KGP_TUNING__JOBS__LEASE_S",
        )
    try:
        if nlp_steps:
            _distill_nlp(graph, embedder, settings, report, source_ids=source_ids, echo=echo)
        if llm_steps and llm is not None:
            return _distill_locked(
                graph, embedder, llm, settings, report, llm_steps, source_ids=source_ids, echo=echo
            )
        return report
    finally:
        lock.release()


def _distill_nlp(
    graph: GraphClient,
    embedder: Embedder,
    settings: Settings,
    report: DistillReport,
    *,
    source_ids: list[str] | None,
    echo: Callable[[str], None] | None,
) -> None:
    """The ``entities`` step by the NLP extractor (no LLM tokens; reports mentions and
    relations per 1,000 corpus tokens instead)."""
    from kg_platform.distilling.nlp_step import extract_entities_nlp

    counts = graph.read(
        "distill/count_chunks",
        corpus=report.corpus,
        levels=settings.tuning.distill.levels,
        source_ids=source_ids,
    )
    report.corpus_tokens = int(counts[0]["tokens"] or 0) if counts else 0
    t0 = time.perf_counter()
    res = extract_entities_nlp(
        graph, embedder, settings, corpus=report.corpus, source_ids=source_ids, echo=echo
    )
    elapsed = time.perf_counter() - t0
    entry = res.to_dict()
    entry["extractor"] = "nlp"
    entry["duration_s"] = round(elapsed, 2)
    report.results["entities"] = entry
    report.duration_s += elapsed
    if echo:
        echo(
            f"entities (nlp): {res.chunks} chunks, {res.written} mentions, "
            f"{res.relations} relations"
            + (f", {len(res.failed)} failed" if res.failed else "")
            + f"; {elapsed:.1f}s"
        )


def distill_lock_name(corpus: str) -> str:
    return f"distill:{corpus}"


def _distill_locked(
    graph: GraphClient,
    embedder: Embedder,
    llm: LLMClient,
    settings: Settings,
    report: DistillReport,
    chosen: list[str],
    *,
    source_ids: list[str] | None,
    echo: Callable[[str], None] | None,
) -> DistillReport:
    from kg_platform.distilling.atomizer import atomize
    from kg_platform.distilling.entities import extract_entities
    from kg_platform.distilling.tagging import tag_corpus

    corpus = report.corpus
    counts = graph.read(
        "distill/count_chunks",
        corpus=corpus,
        levels=settings.tuning.distill.levels,
        source_ids=source_ids,
    )
    report.corpus_tokens = int(counts[0]["tokens"] or 0) if counts else 0
    t0 = time.perf_counter()
    with llm.meter() as meter:
        for step in chosen:
            with llm.meter() as step_meter:
                if step == "atomic":
                    res = atomize(
                        graph, embedder, llm, settings, corpus=corpus, source_ids=source_ids
                    )
                elif step == "entities":
                    res = extract_entities(
                        graph, embedder, llm, settings, corpus=corpus, source_ids=source_ids
                    )
                else:
                    res = tag_corpus(graph, llm, settings, corpus=corpus, source_ids=source_ids)
            entry = res.to_dict()
            entry["usage"] = {k: v for k, v in step_meter.to_dict().items() if k != "by_prompt"}
            if report.corpus_tokens:
                entry["tokens_per_1k_corpus_tokens"] = round(
                    1000.0 * step_meter.total_tokens / report.corpus_tokens, 1
                )
            report.results[step] = entry
            if echo:
                echo(
                    f"{step}: {res.chunks} chunks, {res.written} written"
                    + (f", {res.relations} relations" if res.relations else "")
                    + (f", {len(res.failed)} failed" if res.failed else "")
                    + f"; LLM calls {step_meter.calls} ({step_meter.cache_hits} cached), "
                    f"{step_meter.total_tokens} tokens"
                )
    report.usage = meter.to_dict()
    report.duration_s += time.perf_counter() - t0
    return report


def remove_source_distillation(
    graph: GraphClient, source_id: str, corpus: str | None = None
) -> dict[str, int]:
    """Drop what was distilled from ``source_id``: its atomic questions, the relations it
    evidenced, entity mentions and tags on its chunks, and the entities and tags nothing
    mentions any more. Call it before re-writing a changed source (or pruning it); the ingestion
    writer does so inside its own transaction (:func:`remove_distillation_tx`). When the source's
    chunks are already gone, the corpus-wide orphan sweep still removes what they left."""
    if corpus is None:
        rec = graph.read("distill/source_corpus", source_id=source_id)
        corpus = rec[0]["corpus"] if rec else None
    recs = graph.write("distill/remove_source", source_ids=[source_id])
    keys = ("atoms", "relations", "mentions", "tags", "entities_removed", "tags_removed")
    out = {k: int(recs[0][k] or 0) if recs else 0 for k in keys}
    out["entities_removed"] += int(
        graph.write("distill/drop_orphan_entities", corpus=corpus)[0]["removed"]
    )
    out["tags_removed"] += int(graph.write("distill/drop_orphan_tags", corpus=corpus)[0]["removed"])
    return out


def remove_distillation_tx(tx: Any, source_ids: list[str], corpus: str | None) -> None:
    """``remove_source_distillation`` inside the caller's transaction (the ingestion writer's,
    so a replaced source's old facts vanish in the same commit as its old chunks)."""
    from kg_platform.graph.cypher import cypher

    del corpus  # orphans are found from the source's own subgraph; no corpus-wide sweep here
    tx.run(cypher("distill/remove_source"), source_ids=list(source_ids)).consume()


def record_distillation(graph: GraphClient, run_id: str, report: DistillReport) -> None:
    """Add a distillation's LLM tokens and results to an ingestion run's record."""
    import json

    graph.write(
        "distill/record_run",
        id=run_id,
        tokens=int(report.usage.get("total_tokens", 0)),
        distill=json.dumps(report.to_dict(), default=str),
    )
