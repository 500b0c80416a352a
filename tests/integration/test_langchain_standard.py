"""LangChain's own conformance suite for retrievers (``langchain-tests``'
``RetrieversIntegrationTests``) run against :class:`KGPlatformRetriever` itself: built from its
keyword arguments alone (the platform comes from the environment, as a LangChain user gets it),
``k`` honoured in the constructor and per call, sync and async ``invoke`` returning Documents."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("langchain_tests")

from langchain_tests.integration_tests import RetrieversIntegrationTests

from kg_platform.integrations.langchain import KGPlatformRetriever
from kg_platform.sdk import KnowledgePlatform

pytestmark = pytest.mark.integration

CORPUS = "langchain-standard"
SAMPLES = Path(__file__).resolve().parents[2] / "ingestion" / "samples"


@pytest.fixture(scope="module")
def samples_corpus(graph_session, settings, embedder) -> str:
    platform = KnowledgePlatform(settings, graph=graph_session, embedder=embedder)
    report = platform.ingest([SAMPLES], corpus=CORPUS)
    assert report.status == "completed", report.summary()
    return CORPUS


class TestKGPlatformRetrieverStandard(RetrieversIntegrationTests):
    @pytest.fixture(autouse=True)
    def _neo4j_from_env(self, monkeypatch, settings, samples_corpus) -> None:
        """The environment a LangChain user sets: the retriever builds its platform from it."""
        from kg_platform.config import get_settings

        for name in ("NEO4J_URI", "NEO4J_PASSWORD", "NEO4J_USERNAME", "NEO4J_DATABASE"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("KGP_NEO4J__URI", settings.neo4j.uri)
        monkeypatch.setenv("KGP_NEO4J__PASSWORD", settings.neo4j.password.get_secret_value())
        monkeypatch.setenv("KGP_DATA_DIR", str(settings.data_dir))
        get_settings.cache_clear()
        yield
        get_settings.cache_clear()

    @property
    def retriever_constructor(self) -> type[KGPlatformRetriever]:
        return KGPlatformRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"corpus": CORPUS, "k": 5}

    @property
    def retriever_query_example(self) -> str:
        return "Which file formats can MarkItDown convert?"
