"""LangChain adapter: :class:`KGPlatformRetriever`, a ``BaseRetriever`` over every strategy.

Install with ``pip install -e '.[langchain]'`` (from the repository). Each retrieved item becomes a
``Document`` whose ``page_content`` is the item's text and whose ``metadata`` carries where it
came from and why it was chosen::

    source, source_id, source_uri, section, page, chunk_id, kind, level, score,
    score_breakdown (per level / per layer), path (ids of the nodes that found it),
    strategy, query (the named Cypher), answer_id (when record=True)

Example (needs a populated graph)::

    >>> from kg_platform.integrations.langchain import KGPlatformRetriever
    >>> retriever = KGPlatformRetriever.from_env(strategy="mog", k=4, corpus="docs")  # doctest: +SKIP
    >>> docs = retriever.invoke("How are chunks built?")                              # doctest: +SKIP
    >>> chain = {"context": retriever, "question": RunnablePassthrough()} | prompt | llm  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

try:
    from langchain_core.callbacks import (
        AsyncCallbackManagerForRetrieverRun,
        CallbackManagerForRetrieverRun,
    )
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings
    from langchain_core.retrievers import BaseRetriever
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    from kg_platform.errors import ConfigError

    raise ConfigError(
        "the LangChain adapter needs langchain-core",
        hint="pip install -e '.[langchain]' in the kg-platform repository",
    ) from exc

from pydantic import ConfigDict, Field, model_validator

if TYPE_CHECKING:
    from kg_platform.retrieval.base import RetrievedItem
    from kg_platform.sdk.platform import KnowledgePlatform


def item_to_document(
    item: "RetrievedItem", strategy: str, answer_id: str | None = None
) -> Document:
    """One retrieved item as a LangChain ``Document`` (metadata documented in the module)."""
    chunk_id = item.chunk_id or (item.id if item.kind == "chunk" else None)
    metadata: dict[str, Any] = {
        "source": item.source_title or item.source_uri or item.source_id,
        "source_id": item.source_id,
        "source_uri": item.source_uri,
        "section": item.section_title,
        "page": item.page,
        "chunk_id": chunk_id,
        "id": item.id,
        "kind": item.kind,
        "level": item.level,
        "score": float(item.score),
        "score_breakdown": {k: float(v) for k, v in item.breakdown.items()},
        "path": list(item.path),
        "tokens": item.tokens,
        "strategy": strategy,
        "query": item.query,
    }
    if answer_id:
        metadata["answer_id"] = answer_id
    return Document(page_content=item.text, metadata=metadata, id=item.id)


def _ours_or_the_drivers(exc: Exception) -> bool:
    from neo4j.exceptions import DriverError, Neo4jError

    from kg_platform.errors import KGPError

    return isinstance(exc, (KGPError, Neo4jError, DriverError))


def _public(exc: Exception) -> Exception:
    """The error a LangChain caller sees: the same class with the platform's message, or a
    generic one naming a request id for Neo4j, driver, LLM and embedder text (logged under that
    id by :func:`kg_platform.serve.problems.public_error`, never raised). Its ``request_id``
    attribute carries the id."""
    from kg_platform.errors import KGPError
    from kg_platform.serve.problems import public_error

    public = public_error(exc)
    if isinstance(exc, KGPError):
        out: Exception = type(exc)(public.detail, hint=public.hint)
    else:
        from kg_platform.errors import RetrievalError

        out = RetrievalError(public.detail, hint=public.hint)
    out.request_id = public.request_id  # type: ignore[attr-defined]
    return out


#: What ``invoke(query, **kwargs)`` may override for one call.
_PER_CALL = frozenset({"k", "strategy", "select", "corpus", "scope"})


class KGPlatformRetriever(BaseRetriever):
    """A LangChain retriever over one kg-platform strategy (sync ``invoke``, async ``ainvoke``).

    Built from its parameters alone (``KGPlatformRetriever(corpus="docs", k=3)``) it opens a
    platform from the environment (``KGP_*`` variables, ``NEO4J_URI``/``NEO4J_PASSWORD``,
    ``kgp.toml``), as :meth:`from_env` does. ``invoke(query, k=1)`` (also ``strategy``, ``select``,
    ``corpus``, ``scope``) overrides the retriever's own value for that call only.

    Args:
        platform: the :class:`~kg_platform.KnowledgePlatform` to query (None: one built from
            the environment).
        strategy: any name of ``KnowledgePlatform.strategies()`` (``bm25``, ``vector``,
            ``hybrid``, ``mog``, ``mogg``, ``propagate``, ``atomic``, ...); None: the
            platform's default (``settings.retrieve.strategy``), as everywhere else.
        k: number of documents returned (None: ``settings.retrieve.k``).
        select: selection post-processor (``none`` | ``sage`` | ``late`` | ``auto``; None:
            ``settings.retrieve``, auto = late with the bundled embedder).
        corpus: restrict to one corpus (None: all corpora).
        scope: restrict to some documents (source ids, titles, paths or file names; None:
            the whole corpus), applied inside the strategy's Cypher.
        record: store each retrieval as an answer record for Neo4j Browser ("why was this
            chunk retrieved"); its id is in every document's ``metadata["answer_id"]``.

    Its parameters and each call's overrides are checked by the SDK's request contract
    (:class:`kg_platform.requests.SearchRequest`: ``k`` 1..200, a registered strategy, ...); a
    violation raises :class:`~kg_platform.errors.InvalidRequest` and a corpus the graph does
    not hold :class:`~kg_platform.errors.CorpusNotFound`, as in the SDK.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    platform: Any = Field(
        None, description="a kg_platform.KnowledgePlatform (None: one built from the environment)"
    )
    strategy: str | None = None
    k: int | None = Field(None, ge=1)
    select: str | None = None
    corpus: str | None = None
    scope: list[str] | None = None
    record: bool = False

    @model_validator(mode="before")
    @classmethod
    def _contract(cls, data: Any) -> Any:
        """The retriever's own values checked as a search's (the query comes with each call)."""
        if isinstance(data, dict):
            from kg_platform.requests import SearchRequest

            fields = {f: data[f] for f in _PER_CALL if data.get(f) is not None}
            SearchRequest.parse({"query": "(the query of each call)", **fields})
        return data

    @model_validator(mode="after")
    def _platform_from_env(self) -> "KGPlatformRetriever":
        if self.platform is None:
            from kg_platform.sdk.platform import KnowledgePlatform

            self.platform = KnowledgePlatform.from_env()
        return self

    @classmethod
    def from_env(cls, **kwargs: Any) -> "KGPlatformRetriever":
        """A retriever on :meth:`KnowledgePlatform.from_env` (settings from the environment)."""
        from kg_platform.sdk.platform import KnowledgePlatform

        return cls(platform=KnowledgePlatform.from_env(), **kwargs)

    def _retrieve(self, query: str, overrides: dict[str, Any]) -> list[Document]:
        unknown = sorted(set(overrides) - _PER_CALL)
        if unknown:
            from kg_platform.errors import RetrievalError

            raise RetrievalError(
                f"unknown argument(s) to invoke: {', '.join(unknown)}",
                hint=f"per-call arguments are {', '.join(sorted(_PER_CALL))}",
            )
        kp: KnowledgePlatform = self.platform
        try:
            found = kp.search(  # checks every value (kg_platform.requests.SearchRequest)
                query,
                strategy=overrides.get("strategy", self.strategy),
                k=overrides.get("k", self.k),
                corpus=overrides.get("corpus", self.corpus),
                record=self.record,
                scope=overrides.get("scope", self.scope),
                select=overrides.get("select", self.select),
            )
        except Exception as exc:
            if not _ours_or_the_drivers(exc):
                raise
            raise _public(exc) from None
        return [item_to_document(it, found.strategy, found.answer_id) for it in found.items]

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        return self._retrieve(query, kwargs)

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        **kwargs: Any,
    ) -> list[Document]:
        # The Neo4j driver and the embedder are synchronous; a worker thread keeps the event
        # loop free while the query runs.
        return await asyncio.to_thread(self._retrieve, query, kwargs)


class KGPlatformEmbeddings(Embeddings):
    """LangChain ``Embeddings`` over a kg-platform embedder (by default the configured one).

    Why: a LangChain vector store (``Neo4jVector``, ...) fed with the very model kg-platform
    ingests with, so a comparison of the two measures the pipelines, not two models
    (``kgp lab bench ingest --peer``). Vectors are L2-normalised, as kg-platform stores them.
    """

    def __init__(self, embedder: Any = None) -> None:
        if embedder is None:
            from kg_platform.config import get_settings
            from kg_platform.embedding import get_embedder

            embedder = get_embedder(get_settings().embedding)
        self.embedder = embedder

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [row.tolist() for row in self.embedder.embed(list(texts))]

    def embed_query(self, text: str) -> list[float]:
        return self.embedder.embed([text])[0].tolist()
