"""The Python SDK: :class:`KnowledgePlatform` and the typed results its verbs return."""

from kg_platform.sdk.platform import KnowledgePlatform
from kg_platform.sdk.results import Retrieval

__all__ = ["KnowledgePlatform", "Retrieval"]
