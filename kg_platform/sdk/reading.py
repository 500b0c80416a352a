"""The read verbs of :class:`~kg_platform.sdk.platform.KnowledgePlatform`: the strategies, one
document's outline, retrieval and answers.

Why a module of its own: every door that reads (``kgp retrieve``/``ask``, the HTTP API, MCP,
LangChain) ends in one of these verbs, which check the request
(:mod:`kg_platform.requests`) and hand it to the retrieval pipeline or the reasoner; nothing here
writes the graph except a ranking stored on request (``record=True``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kg_platform.sdk.parts import PlatformParts
from kg_platform.sdk.results import Retrieval, SourceOutline

if TYPE_CHECKING:
    from kg_platform.reasoning import Answer
    from kg_platform.retrieval.base import RetrievedItem

__all__ = ["ReadVerbs"]


class ReadVerbs(PlatformParts):
    """What reads the graph to answer (part of ``KnowledgePlatform``)."""

    def strategies(self) -> dict[str, str]:
        """Every registered retrieval strategy with its one-line description.

        >>> from kg_platform import KnowledgePlatform
        >>> "hybrid" in KnowledgePlatform.from_env().strategies()
        True
        """
        from kg_platform.retrieval.base import list_strategies

        return list_strategies()

    def source_outline(
        self, source: str, corpus: str | None = None, *, level: int = 1
    ) -> SourceOutline:
        """One document as stored: its sections in order, each with its chunks of MoG
        ``level`` (1: the finest chunks) in order. ``source`` is named as in a scope (source
        id, title, path or file name) and must match exactly one source of ``corpus`` (or of
        any corpus when ``corpus`` is None)."""
        from kg_platform.errors import RetrievalError
        from kg_platform.requests import SourceRequest
        from kg_platform.retrieval.scope import resolve_scope

        req = SourceRequest.of(source=source, corpus=corpus, level=level)
        source, level = req.source, req.level
        name = None if req.corpus is None else self.require_corpus(req.corpus)
        ids = resolve_scope(self.graph, [source], name) or []
        if len(ids) != 1:
            raise RetrievalError(
                f"{source!r} names {len(ids)} sources, not one",
                hint="name the source by its id: " + ", ".join(ids[:5]),
            )
        rows = self.graph.read("sdk/source_outline", source_id=ids[0], level=level)
        row = rows[0]
        return SourceOutline(
            id=row["id"],
            title=row["title"],
            uri=row["uri"],
            corpus=row["corpus"],
            pages=row["pages"],
            tokens=row["tokens"],
            sections=[dict(sec) for sec in row["sections"] if sec is not None],
        )

    def retrieve(
        self,
        query: str,
        *,
        strategy: str | None = None,
        k: int | None = None,
        corpus: str | None = None,
        record: bool = False,
        scope: Sequence[str] | None = None,
        select: str | None = None,
    ) -> list["RetrievedItem"]:
        """The top items for ``query`` (see :meth:`search`, which also returns the answer id)."""
        return self.search(
            query, strategy=strategy, k=k, corpus=corpus, record=record, scope=scope, select=select
        ).items

    def search(
        self,
        query: str,
        *,
        strategy: str | None = None,
        k: int | None = None,
        corpus: str | None = None,
        record: bool = False,
        scope: Sequence[str] | None = None,
        select: str | None = None,
        max_tokens: int | None = None,
    ) -> Retrieval:
        """Retrieve with one strategy; every item carries its evidence and where it came from.

        Defaults (``strategy``, ``k``, ``select``) come from ``settings.retrieve``. Each item has
        its score breakdown, path, the named Cypher that found it, and its source (id, title,
        uri), section, page and chunk id. ``select="sage"`` asks the strategy for
        ``settings.tuning.sage.n_candidates`` items and keeps SAGE's gradient cut of them (so the number
        returned is the cut's, not ``k``). ``scope`` restricts retrieval to some documents
        (source ids, titles, paths or file names), inside the Cypher. ``record=True`` stores the
        result as ``(:Trajectory {kind: 'retrieve'})`` and returns its id as ``answer_id``, so
        the Browser guide's "why was this chunk retrieved" query can show it. ``max_tokens``
        (a token budget, instead of ``k``) keeps the longest prefix of the ranking within that
        many tokens, the item that crosses it cut to fit, as ``kgp eval --budget-tokens`` does.
        """
        from kg_platform._faults import fault_point
        from kg_platform.requests import SearchRequest
        from kg_platform.retrieval.pipeline import retrieve

        req = SearchRequest.of(
            query=query,
            strategy=strategy,
            k=k,
            corpus=corpus,
            record=record,
            scope=scope,
            select=select,
            max_tokens=max_tokens,
        )
        query, k, corpus, scope = req.query, req.k, req.corpus, req.scope
        select, max_tokens = req.select, req.max_tokens
        defaults = self.settings.retrieve
        strategy = req.strategy or defaults.strategy
        ctx = self.retrieval_context(corpus, scope, require=True)
        fault_point("retrieve")  # fault tests: connected, about to query (inert otherwise)
        result = retrieve(
            ctx,
            query,
            strategy=strategy,
            k=defaults.k if k is None else k,
            select=select or defaults.select,
            max_tokens=max_tokens,
        )
        items, select = result.items, result.select
        if record:  # the reasoning package only for a stored ranking
            from kg_platform.reasoning.trajectory import store_retrieval
        answer_id = (
            store_retrieval(
                self.graph, question=query, corpus=corpus, strategy=strategy, items=items
            )
            if record
            else None
        )
        return Retrieval(
            query=query,
            strategy=strategy,
            select=select,
            items=items,
            answer_id=answer_id,
            ran=result.ran,
            why=result.why,
        )

    def ask(
        self,
        question: str,
        *,
        corpus: str | None = None,
        strategy: str | None = None,
        mode: str = "auto",
        feedback: bool = False,
        scope: Sequence[str] | None = None,
        context_tokens: int | None = None,
    ) -> "Answer":
        """Answer with citations (LLM when configured; otherwise the best evidence sentences).

        ``mode``: ``auto`` (classify, then factual or decompose), ``factual``, ``decompose``.
        ``scope``: answer from these documents only (as in :meth:`search`).
        ``context_tokens``: the LLM reads the default path's chunks within this many tokens
        (what :meth:`search` returns with ``max_tokens``) instead of SAGE's gradient cut
        (default: ``reasoning.context_tokens``, unset = SAGE's cut).
        """
        from kg_platform.llm.session import open_llm
        from kg_platform.reasoning import Reasoner
        from kg_platform.requests import AskRequest

        req = AskRequest.of(
            question=question,
            corpus=corpus,
            strategy=strategy,
            mode=mode,
            feedback=feedback,
            scope=scope,
            context_tokens=context_tokens,
        )
        question, strategy, mode, scope = req.question, req.strategy, req.mode, req.scope
        context_tokens = req.max_tokens
        # ask answers from settings.corpus when none is named (search: every corpus); the
        # scope is resolved inside that corpus by the same context search uses; a corpus
        # named by the caller must exist (the configured default may still be empty)
        named = req.corpus is not None
        corpus = req.corpus if named else self.settings.corpus
        ctx = self.retrieval_context(corpus, scope, require=named)
        with open_llm(self.settings) as llm:
            reasoner = Reasoner(
                graph=self.graph,
                embedder=self.embedder,
                settings=self.settings,
                llm=llm,
                sources=ctx.sources,
                context=ctx,
            )
            return reasoner.ask(
                question,
                corpus=corpus,
                strategy=strategy,
                mode=mode,
                feedback=feedback,
                context_tokens=context_tokens,
            )
