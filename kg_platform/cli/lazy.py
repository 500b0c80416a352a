"""Lazy stand-ins for what every command module needs, so ``kgp --help`` stays cheap.

Building the command tree imports every command module; if each imported the settings model
(pydantic-settings) and the server manager at module level, listing the commands would pay for
them. These functions import on first call instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kg_platform.config import Settings
    from kg_platform.neo4j_server import LocalNeo4j as _LocalNeo4j
    from kg_platform.sdk.platform import KnowledgePlatform


def get_settings() -> "Settings":
    """:func:`kg_platform.config.get_settings` (cached there, so tests can clear it)."""
    from kg_platform.config import get_settings as settings

    return settings()


def LocalNeo4j(*args: Any, **kwargs: Any) -> "_LocalNeo4j":  # named as the class it stands in for
    """:class:`kg_platform.neo4j_server.LocalNeo4j`, imported on first use."""
    from kg_platform.neo4j_server import LocalNeo4j as server

    return server(*args, **kwargs)


def knowledge_platform() -> "KnowledgePlatform":
    """A :class:`~kg_platform.sdk.platform.KnowledgePlatform` on the current settings: every
    command that reads or writes the graph goes through the SDK, imported on first use."""
    from kg_platform.sdk.platform import KnowledgePlatform

    return KnowledgePlatform(get_settings())
