"""Settings sections of running the platform as a service: ``jobs`` (scheduled ingestion) and
``serve`` (the HTTP API and MCP over HTTP).

Why a module of its own: these are what an operator sets to run the platform unattended (where
job specs live, where the servers listen and what they accept); a library user never reads them.
:class:`kg_platform.config.Settings` gathers them with the other sections; import them from
:mod:`kg_platform.config`.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

__all__ = ["JobsSettings", "ServeSettings"]


class JobsSettings(BaseModel):
    """Scheduled ingestion jobs (``kgp jobs``): where specs live and how the Neo4j lock leases."""

    dir: Path = Field(Path("ingestion"), description="folder of job specs (*.toml, *.yaml)")


class ServeSettings(BaseModel):
    """``kgp serve`` (HTTP API) and ``kgp mcp --http``: where they listen and what they accept.

    The API key is not a setting here: it lives in ``data_dir/serve/api-key`` (created 0600 on
    first use) or comes from ``KGP_API_KEY``, so it never lands in a ``kgp.toml``.
    """

    host: str = Field("127.0.0.1", description="listen address; loopback unless set otherwise")
    port: int = Field(8765, ge=0, le=65535, description="HTTP port of `kgp serve`")
    mcp_port: int = Field(8766, ge=0, le=65535, description="HTTP port of `kgp mcp --http`")
    max_body_bytes: int = Field(
        1_000_000, ge=1, le=10**10, description="largest request body outside uploads (413 above)"
    )
    max_upload_bytes: int = Field(
        100_000_000,
        ge=1,
        le=10**12,
        description="largest upload request to /v1/ingest/upload (413 above)",
    )
    rate_per_s: float = Field(
        20.0,
        gt=0,
        le=10**6,
        description="requests per second refilled into each client's token bucket",
    )
    rate_burst: int = Field(
        40, ge=1, le=1_000_000, description="token bucket size: requests a client may burst"
    )
    ingest_roots: list[Path] = Field(
        default_factory=list,
        description="folders `POST /v1/ingest` may read (empty: ingestion by path is refused, "
        "uploads still work); every path and every file of a folder walk must resolve, links "
        "followed, inside one of them; relative paths are taken relative to the first; "
        "data_dir and cache_dir are refused even under a root",
    )
    upload_quota_bytes: int = Field(
        1_000_000_000,
        ge=1,
        le=10**15,
        description="bytes of uploaded files kept per corpus under data_dir/serve/uploads "
        "(an upload that would exceed it is refused with 413 and nothing is stored)",
    )
    cors_origins: list[str] = Field(
        default_factory=list,
        description="browser origins allowed to call the API from their pages (CORS), e.g. "
        '["https://app.example.com"]; empty (the default): no CORS headers at all',
    )
