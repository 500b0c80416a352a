"""Step 8, distill: the NLP layer (spaCy entities and relations, no LLM) over the corpus's
pending chunks at the end of an ingestion, as ``distill.nlp_on_ingest`` says.

:class:`NlpLayer` starts the parser (a child process) at the run's first new source, so its
spaCy pipeline loads while the run still embeds, and runs the extractor once the writes are done
(:meth:`NlpLayer.run`, returning a :class:`NlpOutcome` the runner folds into its report).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kg_platform.config import Settings
from kg_platform.embedding.base import Embedder
from kg_platform.graph.client import GraphClient
from kg_platform.ingest.rows import SourcePlan

if TYPE_CHECKING:
    from kg_platform.distilling.nlp_parser import NlpParser

log = logging.getLogger(__name__)

__all__ = ["ENTITIES_SKIPPED_FOR_DOCUMENTS", "NlpLayer", "NlpOutcome"]

#: the report's word when ``distill.nlp_on_ingest = auto`` leaves the entities out
ENTITIES_SKIPPED_FOR_DOCUMENTS = (
    "entities: not built, the corpus holds long documents, where the default retrieval does not "
    "read them (`kgp distill --extractor nlp` builds them; KGP_DISTILL__NLP_ON_INGEST=true at "
    "every ingestion)"
)


@dataclass
class NlpOutcome:
    """What the step adds to the run's report: its line, counts and phase timings."""

    entities: str | None = None
    counts: dict[str, int] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)


class NlpLayer:
    def __init__(
        self, graph: GraphClient, settings: Settings, corpus: str, embedder: Embedder
    ) -> None:
        self.graph, self.settings, self.corpus, self.embedder = graph, settings, corpus, embedder
        self._nlp_parser: NlpParser | None = None  # started at the first new source (NLP layer)
        self._nlp_parser_considered = False  # whether the first new source has been looked at
        self._nlp_setting: str | None = None  # "on" | "off" | "auto", read once (mode)

    def mode(self) -> str:
        """Whether the NLP step runs at the end of this ingestion: ``on``, ``off``, or ``auto``
        (decided by the corpus's shape once it is written; ``distill.nlp_on_ingest``). ``off``
        whatever the setting unless the NLP extractor is the one in use (``distill.extractor``:
        ``nlp``, or ``auto`` without an LLM and with spaCy installed)."""
        if self._nlp_setting is None:
            from kg_platform.distilling.nlp_step import resolve_extractor

            setting = self.settings.distill.nlp_on_ingest
            if setting is False or resolve_extractor(self.settings) != "nlp":
                self._nlp_setting = "off"
            else:
                self._nlp_setting = "auto" if setting == "auto" else "on"
        return self._nlp_setting

    def start_parser(self, plan: SourcePlan, corpus_had_sources: bool) -> None:
        """At the first source with new chunks, start the NLP step's parser (a child process)
        when the step will run, so its spaCy pipeline loads while this run still embeds. Under
        ``auto`` the step itself waits for the corpus's shape at the end; the parser starts
        ahead when the corpus (or, for a new corpus, this first source) looks like short
        passages, and is closed unused if the end decides otherwise."""
        if self._nlp_parser is not None or self._nlp_parser_considered:
            return
        self._nlp_parser_considered = True
        mode = self.mode()
        if mode == "off" or (
            mode == "auto" and not self._looks_like_passages(plan, corpus_had_sources)
        ):
            return
        from kg_platform.distilling.nlp_parser import NlpParser

        cfg = self.settings.tuning.distill
        self._nlp_parser = NlpParser(
            self.settings.distill.nlp_model,
            in_child=cfg.nlp_parse_process,
            relations=self.settings.distill.relations,
        ).start()

    def _looks_like_passages(self, plan: SourcePlan, corpus_had_sources: bool) -> bool:
        """The guess that starts the parser early: the shape of the corpus as it was, or for a
        corpus new in this run, whether ``plan``'s source is a passage of a few chunks."""
        from kg_platform.graph.corpus_shape import corpus_holds_passages, holds_documents

        if corpus_had_sources:
            return corpus_holds_passages(self.graph, self.corpus)
        return not holds_documents(1, sum(1 for chunk in plan.chunks if chunk.level == 2))

    def close(self) -> None:
        parser, self._nlp_parser = self._nlp_parser, None
        if parser is not None:
            parser.close()

    def run(self, emit: Callable[..., Any]) -> NlpOutcome:
        """The NLP extractor over the corpus's pending chunks, as :meth:`mode` says: under
        ``auto`` only where ``auto`` retrieval reads the corpus as short passages (its default
        path there walks the entities; over long documents it runs ``propagate``, which does
        not read them, and the report says how to build them anyway). Under the corpus's
        distillation lock; a running distillation already covers the same chunks, so a held
        lock skips with a log line."""
        from kg_platform.distilling.nlp_step import extract_entities_nlp
        from kg_platform.distilling.runner import distill_lock_name
        from kg_platform.graph.corpus_shape import corpus_holds_passages
        from kg_platform.graph.lock import JobLock

        out = NlpOutcome()
        mode = self.mode()
        if mode == "off":
            return out
        if mode == "auto" and not corpus_holds_passages(self.graph, self.corpus):
            out.entities = ENTITIES_SKIPPED_FOR_DOCUMENTS
            return out
        emit(event="phase", name="entities")
        started = time.perf_counter()
        lock = JobLock(
            self.graph, distill_lock_name(self.corpus), lease_s=self.settings.tuning.jobs.lease_s
        )
        if not lock.acquire():
            log.warning(
                "NLP entities skipped: a distillation of corpus %r is running (%s)",
                self.corpus,
                lock.holder,
            )
            return out
        try:
            res = extract_entities_nlp(
                self.graph,
                self.embedder,
                self.settings,
                corpus=self.corpus,
                parser=self._nlp_parser,
            )
        finally:
            lock.release()
        out.timings["entities"] = time.perf_counter() - started
        out.counts["entity_chunks"] = res.chunks
        out.counts["entity_mentions"] = res.written
        out.counts["entity_relations"] = res.relations
        for phase, seconds in res.timings.items():
            out.timings[f"entities_{phase}"] = seconds
        if res.failed:
            out.counts["entity_chunks_failed"] = len(res.failed)
        if res.chunks or res.failed:
            out.entities = (
                f"entities (NLP extractor): {res.chunks} chunks read, {res.written} mentions, "
                f"{res.relations} relations"
                + (f", {len(res.failed)} chunks failed (see the log)" if res.failed else "")
            )
        return out
