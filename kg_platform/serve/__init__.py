"""Serving the platform: an HTTP API (``kgp serve``) and an MCP server (``kgp mcp``).

Both are thin: every request becomes one call of the SDK (:class:`~kg_platform.sdk.KnowledgePlatform`)
shared by the whole process (one driver pool, one embedder), run in a thread pool because the
SDK is synchronous. FastAPI, uvicorn and the ``mcp`` SDK come with the ``serve`` extra and are
imported only inside this package, so the rest of the product works without them.
"""

from __future__ import annotations

from kg_platform.errors import ConfigError

__all__ = ["require_serve_extra"]

INSTALL_HINT = "pip install -e '.[serve]' in the kg-platform repository"


def require_serve_extra() -> None:
    """Raise a :class:`ConfigError` naming the install command when the extra is missing."""
    import importlib.util

    missing = [
        name
        for name in ("fastapi", "uvicorn", "mcp", "python_multipart")
        if importlib.util.find_spec(name) is None
    ]
    if missing:
        raise ConfigError(
            f"serving needs {', '.join(missing)}, which is not installed",
            hint=f"install the serve extra: {INSTALL_HINT}",
        )
