"""The Python SDK: :class:`KnowledgePlatform` and the typed results its verbs return."""

from kg_platform.sdk.platform import KnowledgePlatform
from kg_platform.sdk.results import CorpusInfo, Retrieval, SourceOutline

__all__ = ["CorpusInfo", "KnowledgePlatform", "Retrieval", "SourceOutline"]
