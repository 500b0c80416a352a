"""The LangChain adapter against the real Neo4j: every strategy is reachable, documents carry
source/page/chunk/level/score breakdown, sync and async agree, and the retriever works inside a
small LCEL chain with a fake chat model."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("langchain_core")

from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnablePassthrough

from kg_platform.errors import InvalidRequest
from kg_platform.integrations.langchain import KGPlatformRetriever
from kg_platform.retrieval.base import list_strategies
from kg_platform.sdk import KnowledgePlatform

pytestmark = pytest.mark.integration

CORPUS = "langchain-test"
SAMPLE = Path(__file__).resolve().parents[2] / "ingestion" / "samples" / "ibm-wikipedia.md"
FALLBACK = Path("/work/shared/bench/documents/md/docling-wiki-ibm.md")
QUESTION = "Where is IBM headquartered?"


@pytest.fixture(scope="module")
def kp(graph_session, settings, embedder):
    platform = KnowledgePlatform(settings, graph=graph_session, embedder=embedder)
    report = platform.ingest([SAMPLE if SAMPLE.exists() else FALLBACK], corpus=CORPUS)
    assert report.status == "completed", report.summary()
    return platform


@pytest.mark.parametrize("strategy", ["bm25", "vector", "hybrid", "mog", "mogg", "propagate"])
def test_strategy_documents_carry_their_evidence(kp, strategy) -> None:
    retriever = KGPlatformRetriever(platform=kp, strategy=strategy, k=3, corpus=CORPUS)
    docs = retriever.invoke(QUESTION)
    assert 0 < len(docs) <= 3
    for doc in docs:
        md = doc.metadata
        assert doc.page_content.strip()
        assert md["strategy"] == strategy and md["source_id"] and md["source"]
        assert md["chunk_id"] and isinstance(md["score"], float)
        assert isinstance(md["score_breakdown"], dict)
        assert "page" in md and "level" in md and "section" in md
        if md["kind"] == "chunk":
            assert isinstance(md["level"], int) and md["level"] >= 1
    assert [d.metadata["score"] for d in docs] == sorted(
        (d.metadata["score"] for d in docs), reverse=True
    )


def test_every_registered_strategy_is_accepted_and_unknown_ones_are_not(kp) -> None:
    for name in list_strategies():
        assert KGPlatformRetriever(platform=kp, strategy=name).strategy == name
    with pytest.raises(InvalidRequest, match="unknown strategy"):
        KGPlatformRetriever(platform=kp, strategy="no-such-strategy")


def test_async_matches_sync_and_records_an_answer(kp) -> None:
    retriever = KGPlatformRetriever(platform=kp, strategy="hybrid", k=3, corpus=CORPUS, record=True)
    sync_docs = retriever.invoke(QUESTION)
    async_docs = asyncio.run(retriever.ainvoke(QUESTION))
    assert [d.id for d in async_docs] == [d.id for d in sync_docs]
    answer_id = async_docs[0].metadata["answer_id"]
    assert answer_id != sync_docs[0].metadata["answer_id"]
    edges = kp.graph.read_raw(
        "MATCH (:Trajectory {id: $id})-[c:CHOSE]->(:Chunk) RETURN count(c) AS n", id=answer_id
    )[0]["n"]
    assert edges == len(async_docs)


def test_retriever_in_an_lcel_chain_with_a_fake_chat_model(kp) -> None:
    retriever = KGPlatformRetriever(platform=kp, strategy="hybrid", k=2, corpus=CORPUS)
    seen: list[str] = []

    def format_docs(docs) -> str:
        return "\n\n".join(
            f"[{d.metadata['source']} p.{d.metadata['page']}] {d.page_content}" for d in docs
        )

    def spy(prompt_value):
        seen.append(prompt_value.to_string())
        return prompt_value

    prompt = ChatPromptTemplate.from_messages(
        [
            ("system", "Answer from the context only.\n\nContext:\n{context}"),
            ("human", "{question}"),
        ]
    )
    chain = (
        {"context": retriever | format_docs, "question": RunnablePassthrough()}
        | prompt
        | RunnableLambda(spy)
        | FakeListChatModel(responses=["IBM is headquartered in Armonk, New York."])
        | StrOutputParser()
    )
    assert chain.invoke(QUESTION) == "IBM is headquartered in Armonk, New York."
    top = retriever.invoke(QUESTION)[0]
    assert top.page_content[:80] in seen[0] and QUESTION in seen[0]
    assert asyncio.run(chain.ainvoke(QUESTION)) == "IBM is headquartered in Armonk, New York."
