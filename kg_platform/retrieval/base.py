"""What every retrieval strategy takes and returns, and the registry ``kgp lab eval`` reads.

A strategy is a named object with ``retrieve(query, k) -> list[RetrievedItem]``. Strategies are
registered with :func:`register_strategy` under a stable name (``bm25``, ``vector``, ``hybrid``,
``mog``, ``mogg``, ``propagate``, ``atomic``, ``peer-...``) and built on demand from a
:class:`RetrievalContext`, so the harness, the CLI, the SDK and the LangChain adapter all share
one list.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from kg_platform.errors import RetrievalError

if TYPE_CHECKING:
    from kg_platform.config import Settings
    from kg_platform.embedding import Embedder
    from kg_platform.graph import GraphClient
    from kg_platform.retrieval.scope import ScopeShape


@dataclass
class RetrievedItem:
    """One ranked result with the evidence of how it was found."""

    id: str  # node id (Chunk.id, Piece.id, or a group's centre id)
    text: str
    score: float
    kind: str = "chunk"  # 'chunk' | 'piece' | 'group'
    level: int | None = None  # MoG level (chunks) or hop radius + 1 (groups)
    source_id: str | None = None
    source_title: str | None = None
    section_title: str | None = None
    page: int | None = None
    tokens: int | None = None
    breakdown: dict[str, float] = field(default_factory=dict)  # per-level / per-layer scores
    path: list[str] = field(default_factory=list)  # ids of nodes on the path found
    query: str = ""  # named Cypher that found it
    source_uri: str | None = None  # filled by the SDK from the graph when known
    chunk_id: str | None = None  # the level chunk holding a piece or group

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def chunk_item(
    record: Any,
    query: str,
    *,
    breakdown: dict[str, float] | None = None,
    path: Sequence[str] | None = None,
) -> RetrievedItem:
    """The one mapping from a chunk query's row to an item.

    Every chunk query returns ``id, text, score, level, source_id, source_title, tokens`` and
    may return ``section_title`` and ``page``; what it leaves out, the pipeline's enrichment
    fills in from the graph.
    """
    return RetrievedItem(
        id=record["id"],
        text=record["text"] or "",
        score=float(record["score"]),
        kind="chunk",
        level=record["level"],
        source_id=record["source_id"],
        source_title=record["source_title"],
        section_title=record.get("section_title"),
        page=record.get("page"),
        tokens=record["tokens"],
        breakdown=dict(breakdown or {}),
        path=list(path or []),
        query=query,
    )


@dataclass
class RetrievalContext:
    graph: "GraphClient"
    embedder: "Embedder"
    settings: "Settings"
    corpus: str | None = None  # restrict to one corpus (None = all)
    sources: list[str] | None = None  # document scope: source ids (None = no scope)
    _shares: dict[str, float] = field(default_factory=dict, repr=False, compare=False)
    _scope_shares: dict[tuple[tuple[str, ...], int], float] = field(
        default_factory=dict, repr=False, compare=False
    )
    _medians: dict[tuple[tuple[str, ...], tuple[str, ...]], int] = field(
        default_factory=dict, repr=False, compare=False
    )
    _routers: dict[tuple[str, str, int, int | None, str], tuple[Any, str]] = field(
        default_factory=dict, repr=False, compare=False
    )
    #: scope_key() -> the scope's shape, read once (see :meth:`shape`)
    _shapes: dict[tuple[str | None, tuple[str, ...] | None], "ScopeShape"] = field(
        default_factory=dict, repr=False, compare=False
    )
    #: corpus -> the prefix of its own index names, "" for the shared ones (see index_prefix)
    _prefixes: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    def scope_key(self) -> tuple[str | None, tuple[str, ...] | None]:
        """What the scope is known by: (corpus, its document scope's sorted source ids)."""
        return (self.corpus, tuple(sorted(self.sources)) if self.sources else None)

    def shape(self) -> "ScopeShape":
        """The scope's shape (:func:`~kg_platform.retrieval.scope.read_shape`: its document
        scope, else its corpus, else the whole graph), read at the first step that asks and
        handed to every later one (``auto``'s choice, the query head, the document rerank)."""
        key = self.scope_key()
        if key not in self._shapes:
            from kg_platform.retrieval.scope import read_shape

            self._shapes[key] = read_shape(self.graph, self.corpus, self.sources)
        return self._shapes[key]

    def index_prefix(self, corpus: str | None = None) -> str:
        """What a query prepends to an index name (``chunk_text_l1``, ``piece_embedding``, ...)
        to search ``corpus`` (default: ``self.corpus``): the corpus's own indexes
        (:func:`~kg_platform.graph.corpus_indexes.own_prefix`), whose BM25 statistics and
        nearest neighbours no other corpus changes. Looked up once per context, like the
        shares below. A search over every corpus asks each corpus's in turn
        (:class:`EveryCorpus`)."""
        corpus = self.corpus if corpus is None else corpus
        key = corpus or ""
        if key not in self._prefixes:
            from kg_platform.graph.corpus_indexes import own_prefix

            self._prefixes[key] = own_prefix(self.graph, corpus)
        return self._prefixes[key]

    def corpora(self) -> list[str]:
        """The corpora a search covers: ``[self.corpus]``, or every corpus with chunks."""
        if self.corpus:
            return [self.corpus]
        corpora = [r["corpus"] for r in self.graph.read("retrieval/mog_corpora")]
        if not corpora:
            raise RetrievalError(
                "the graph holds no corpus with chunks",
                hint="ingest documents first: `kgp ingest PATH --corpus NAME`",
            )
        return corpora

    def for_corpus(self, corpus: str) -> "RetrievalContext":
        """The same search restricted to ``corpus`` (a context of its own: its caches are
        keyed by what they read, but a fresh one keeps each corpus's reads apart)."""
        return RetrievalContext(
            self.graph, self.embedder, self.settings, corpus, sources=self.sources
        )

    def router_of(
        self, corpus: str, kind: str, n_levels: int, dim: int | None = None
    ) -> tuple[Any, str]:
        """The router ``corpus`` uses for ``kind`` and where it comes from
        (:func:`~kg_platform.retrieval.strategies.router.router_for`), looked up once per context.

        Why: the lookup is a statement of its own, a full round trip, a noticeable share of a
        MoG query's time. Like the shares below, a context sees the routers as
        they were at its first query: the SDK and CLI make one context per call, training
        through a context (``train_router``) refreshes it, and code that changes the
        ``(:Router)`` nodes behind a long-lived context calls :meth:`forget_routers`.
        """
        # the default-router setting is part of the key: switching it picks again at once
        key = (corpus, kind, n_levels, dim, str(self.settings.mog.default_router))
        if key not in self._routers:
            from kg_platform.retrieval.strategies.router import router_for

            self._routers[key] = router_for(self.graph, self.settings, corpus, kind, n_levels, dim)
        return self._routers[key]

    def forget_routers(self) -> None:
        """Look the routers up again at the next query (after one was trained or deleted)."""
        self._routers.clear()

    def median_source_tokens(self, corpora: Sequence[str], sample: int = 1000) -> int:
        """Median length in tokens of the documents searched: the scope's sources, else up to
        ``sample`` sources per corpus (counted once per context, like the shares below)."""
        key = (tuple(corpora), tuple(self.sources or ()))
        if key not in self._medians:
            rows = self.graph.read(
                "retrieval/median_source_tokens",
                corpora=list(corpora),
                sources=self.sources,
                sample=sample,
            )
            self._medians[key] = int(rows[0]["median"] or 0) if rows else 0
        return self._medians[key]

    def scope_fetch(self, need: int, level: int = 1, ceiling: int = 20_000) -> int:
        """Fulltext hits to ask for so that about ``need`` fall inside the document scope.

        Lucene cannot filter by source before ranking, so a scoped fulltext query over-fetches
        by the inverse of the scope's share of that level's chunks (times 4), within
        ``[need, ceiling]``. Vector scoring in a scope does not need this: it is exact over the
        scope's own nodes. Without a scope this is :meth:`index_fetch`'s business.
        """
        if not self.sources:
            return need
        key = (tuple(self.sources), level)
        if key not in self._scope_shares:
            rows = self.graph.read("retrieval/scope_share", sources=self.sources, level=level)
            self._scope_shares[key] = float(rows[0]["share"]) if rows else 0.0
        share = self._scope_shares[key]
        if share >= 0.999:
            return need
        return max(need, min(ceiling, int(need * 4 / max(share, 1e-6)) + 1))

    def __post_init__(self) -> None:
        from kg_platform.corpus_name import check_corpus

        check_corpus(self.corpus, optional=True)  # "" would mean "all" to some strategies

    def index_fetch(self, need: int, ceiling: int, corpora: Sequence[str] | None = None) -> int:
        """Index hits to ask for so that about ``need`` of them belong to the corpora searched.

        Neo4j 5.26 indexes cannot pre-filter by property, so strategies over-fetch and filter
        by ``corpus`` in Cypher. Asking an HNSW index for 200 neighbours costs about three times
        asking for 10, so the over-fetch follows the corpus's share of the chunks (counted once
        per context, and the SDK and CLI make one per call, so a newly ingested corpus is seen at
        once; the count walks the chunk_corpus index, cheaper than the over-fetch it saves):
        ``need`` when nothing is filtered or the corpus is the whole graph,
        ``need / share`` times a safety factor of 4 otherwise, within ``[need, ceiling]``
        (``ceiling`` = the configured ``fetch``). ``corpora`` = the corpora the query filters on
        one by one (default: ``[self.corpus]`` when set); several corpora take the ceiling.
        Corpora that all have their own indexes (:meth:`index_prefix`) need no over-fetch: every
        hit is theirs, and what is asked for must not follow the other corpora's size either
        (a vector index's answer depends on how many neighbours are asked for).
        """
        if corpora is None:
            corpora = [self.corpus] if self.corpus else []
        if not corpora or all(self.index_prefix(c) for c in corpora):
            return need
        if len(corpora) > 1:
            return max(need, ceiling)
        corpus = corpora[0]
        if corpus not in self._shares:
            rows = self.graph.read("retrieval/corpus_share", corpus=corpus)
            self._shares[corpus] = float(rows[0]["share"]) if rows else 0.0
        share = self._shares[corpus]
        if share >= 0.999:
            return need
        return max(need, min(ceiling, int(need * 4 / max(share, 1e-6)) + 1))


class Strategy(Protocol):
    name: str

    def retrieve(self, query: str, k: int) -> list[RetrievedItem]: ...


StrategyFactory = Callable[[RetrievalContext], Strategy]
_REGISTRY: dict[str, tuple[StrategyFactory, str]] = {}


def register_strategy(
    name: str, description: str, *, scoped: bool = False, every_corpus: bool = False
) -> Callable[[StrategyFactory], StrategyFactory]:
    """Decorator: ``@register_strategy("bm25", "fulltext over level-2 chunks", scoped=True)``.

    ``scoped=True`` says the strategy honours ``ctx.sources`` inside its queries; asking any
    other strategy for a document scope fails with a clear error rather than ignoring it.
    ``every_corpus=True`` says it searches every corpus itself when ``ctx.corpus`` is None (MoG's
    and MoGG's queries take one row per corpus; ``auto`` picks for the whole graph); any other
    strategy is then run once per corpus by :class:`EveryCorpus`.
    """

    def wrap(factory: StrategyFactory) -> StrategyFactory:
        _REGISTRY[name] = (factory, description)
        factory.supports_scope = scoped  # type: ignore[attr-defined]
        factory.every_corpus = every_corpus  # type: ignore[attr-defined]
        return factory

    return wrap


#: Entry-point group through which other distributions add strategies (the lab's benchmark
#: peers): each entry names a module that registers its strategies when imported.
STRATEGY_ENTRY_POINTS = "kg_platform.strategies"


_loaded = False


def _load_builtin(rescan: bool = False) -> None:
    """Import the modules that register strategies, then any installed plug-in strategies.

    Once per process: scanning the installed distributions' entry points costs ~20-30 ms, and
    every SDK call builds its strategy (and ``auto`` the one it picks). ``rescan`` looks again,
    for a name still unknown after the first scan (a plug-in installed since)."""
    global _loaded
    if _loaded and not rescan:
        return
    import importlib
    from importlib.metadata import entry_points

    for module in ("baselines", "mog", "mogg", "propagate", "atomic", "entity", "auto"):
        importlib.import_module(f"kg_platform.retrieval.strategies.{module}")
    for entry in entry_points(group=STRATEGY_ENTRY_POINTS):
        try:
            importlib.import_module(entry.value)
        except ModuleNotFoundError as exc:
            if not (exc.name and entry.value.startswith(exc.name)):
                raise  # the plug-in is there but broken: say so
            # its distribution's metadata outlived its package: nothing to register
    _loaded = True


def list_strategies() -> dict[str, str]:
    _load_builtin()
    return {name: desc for name, (_, desc) in sorted(_REGISTRY.items())}


def get_strategy(name: str, ctx: RetrievalContext) -> Strategy:
    _load_builtin()
    if name not in _REGISTRY:
        _load_builtin(rescan=True)
    if name not in _REGISTRY:
        known = ", ".join(sorted(_REGISTRY)) or "none"
        raise RetrievalError(f"unknown strategy {name!r}", hint=f"known strategies: {known}")
    factory = _REGISTRY[name][0]
    if ctx.sources and not getattr(factory, "supports_scope", False):
        scoped = ", ".join(
            n for n, (f, _) in sorted(_REGISTRY.items()) if getattr(f, "supports_scope", False)
        )
        raise RetrievalError(
            f"strategy {name!r} cannot be restricted to a document scope yet",
            hint=f"retrieve without a document scope, or use one of: {scoped}",
        )
    if ctx.corpus is None and not getattr(factory, "every_corpus", False):
        return EveryCorpus(name, ctx)
    return factory(ctx)


class EveryCorpus:
    """A one-corpus strategy run over every corpus (``ctx.corpus`` None), its answers pooled.

    Why: every corpus has indexes of its own (:mod:`kg_platform.graph.corpus_indexes`) and no
    index spans them, so a search over all of them is one search per corpus. Each part keeps
    its own ranking; the pool orders by score (the strategies' scores are cosines, BM25 or sums
    of them, on one scale whatever the corpus), then by corpus name and the part's own order.
    """

    def __init__(self, name: str, ctx: RetrievalContext) -> None:
        self.name = name
        self.parts: list[Strategy] = []
        self._refused: list[RetrievalError] = []
        for corpus in sorted(ctx.corpora()):
            try:
                self.parts.append(get_strategy(name, ctx.for_corpus(corpus)))
            except RetrievalError as exc:  # this corpus cannot answer this way (no such layer)
                self._refused.append(exc)
        if not self.parts:
            raise self._refused[0]

    def retrieve(self, query: str, k: int) -> list[RetrievedItem]:
        """Each corpus's top ``k``, pooled; a corpus that cannot answer this way (its graph
        lacks the layer the strategy reads, e.g. atomic questions) is left out, unless none can.
        """
        pooled: list[tuple[float, int, int, RetrievedItem]] = []
        refused: list[RetrievalError] = []
        for part, strategy in enumerate(self.parts):
            try:
                found = strategy.retrieve(query, k)
            except RetrievalError as exc:
                refused.append(exc)
                continue
            pooled.extend((-round(it.score, 12), part, rank, it) for rank, it in enumerate(found))
        if len(refused) == len(self.parts):  # no corpus could answer: say why the first could not
            raise (self._refused + refused)[0]
        pooled.sort(key=lambda row: row[:3])
        return [item for *_, item in pooled[:k]]
