"""The Python SDK: :class:`KnowledgePlatform` and the typed results its verbs return."""

from kg_platform.sdk.platform import KnowledgePlatform

__all__ = ["KnowledgePlatform"]
