"""The server's own API key of ``kgp serve`` and ``kgp mcp --http``: admin over every corpus.

One key per data dir: generated on first use into ``data_dir/serve/api-key`` with mode 0600
(created with that mode, never widened afterwards), or set with ``KGP_API_KEY``, which wins.
A key shorter than 32 characters (or with characters a Bearer header cannot carry) is refused
at start. Clients send it as ``Authorization: Bearer KEY``. It is compared in constant time
(:class:`~kg_platform.serve.keys.KeyRing`) and never written to a log. Keys scoped to corpora
and rights live in the graph (:mod:`kg_platform.serve.keys`, ``kgp serve keys``).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from kg_platform.config import Settings
from kg_platform.errors import ConfigError
from kg_platform.serve.keys import check_key_text

__all__ = ["ENV_VAR", "api_key", "key_file"]

ENV_VAR = "KGP_API_KEY"


def key_file(settings: Settings) -> Path:
    return settings.data_dir / "serve" / "api-key"


def api_key(settings: Settings) -> str:
    """The key in force: ``KGP_API_KEY`` if set, else the data dir's key (made on first use)."""
    from_env = os.environ.get(ENV_VAR, "").strip()
    if from_env:
        return check_key_text(from_env, ENV_VAR)
    path = key_file(settings)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass  # another process made it first: read theirs
        else:
            with os.fdopen(fd, "w") as out:
                out.write(secrets.token_urlsafe(32) + "\n")
    try:
        key = path.read_text().strip()
    except OSError as exc:
        raise ConfigError(
            f"cannot read the API key file {path}: {exc}",
            hint=f"give this user read access to it, or set {ENV_VAR}",
        ) from exc
    if not key:
        raise ConfigError(
            f"the API key file {path} is empty",
            hint=f"delete it (a new key is generated on the next start), or set {ENV_VAR}",
        )
    return check_key_text(key, str(path))
