"""Fitted constants and internal limits: what the platform runs with but a user does not set.

:class:`kg_platform.config.Settings` holds what a user configures (``docs/settings.md``). The
values here are the ones that were fitted on the bench data, follow a paper, or switch between
variants that experiments compare; they are not settings. Fitted values are read from the shipped
files they were fitted into, each checked against the sha256 of its provenance record (like the
routers and the rerank weights under ``kg_platform/models/``):

* ``propagation.lam_*``: ``models/propagation/layer-weights.json``
* ``entity_graph.chunk_weight``, ``damping``, ``max_degree``: ``models/entity-walk/walk.json``
* the SAGE segmenter's cut threshold and coarse chunks: the model's own ``meta.json``

Code reads them as ``settings.tuning.<section>.<name>``. Who may change them:

* the lab, for its experiments: ``[lab.tuning.<section>]`` in ``kgp.toml`` or
  ``KGP_LAB__TUNING__<SECTION>__<NAME>`` (read by :mod:`kg_platform_lab.settings`, which calls
  :func:`set_overrides`), or per run with :meth:`kg_platform.config.Settings.with_tuning`;
* an operator, for the few values that are limits of a deployment rather than fitted (timeouts,
  threads, workers, the authentication-failure limit, the job lease; the list is
  :data:`kg_platform.config_tuning.OPERATOR_VALUES`): ``[tuning.<section>]`` in ``kgp.toml`` or
  ``KGP_TUNING__<SECTION>__<NAME>``, validated against their bounds and listed in
  ``docs/settings.md`` ("Advanced tuning");
* for one release, a former setting of the same name (``[mog] k_r = 8``, ``KGP_MOG__K_R=8``),
  with a warning naming where it went (``CHANGELOG.md``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from kg_platform.errors import ConfigError

MODELS_DIR = Path(__file__).parent / "models"
PROPAGATION_WEIGHTS = MODELS_DIR / "propagation" / "layer-weights.json"
ENTITY_WALK = MODELS_DIR / "entity-walk" / "walk.json"


def file_sha256(path: Path, chunk: int = 1 << 20) -> str:
    """The sha256 (hex) of the file at ``path``, read ``chunk`` bytes at a time: the one hash a
    shipped model or weights file is checked by against its provenance record."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(chunk), b""):
            digest.update(block)
    return digest.hexdigest()


@lru_cache(maxsize=8)
def fitted_values(path: Path) -> dict[str, Any]:
    """The values of the shipped fitted file ``path``, after checking it is the file its
    provenance record (``<name>.provenance.json`` beside it) names."""
    provenance = path.with_name(path.stem + ".provenance.json")
    if not path.is_file() or not provenance.is_file():
        raise ConfigError(
            f"the fitted values {path} or their provenance {provenance.name} are missing",
            hint="reinstall kg-platform (the files ship in the package)",
        )
    expected = json.loads(provenance.read_text(encoding="utf-8")).get("sha256")
    actual = file_sha256(path)
    if expected != actual:
        raise ConfigError(
            f"the fitted values {path} do not match their provenance (sha256 {actual[:12]}..., "
            f"expected {str(expected)[:12]}...)",
            hint="reinstall kg-platform; the lab overrides fitted values with [lab.tuning]",
        )
    values = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(values, dict)
    return values


class Neo4jTuning(BaseModel):
    start_timeout_s: float = Field(
        120.0,
        gt=0,
        le=3600,
        description="seconds the local server may take to answer after a start",
    )
    retry_s: float = Field(
        10.0,
        ge=0,
        le=3600,
        description="seconds the driver retries a failed transaction before the command reports "
        "Neo4j unavailable (the driver's own default is 30)",
    )
    connect_timeout_s: float = Field(
        5.0, gt=0, le=600, description="TCP connect timeout to Neo4j, s"
    )


class SegmentTuning(BaseModel):
    min_sentence_tokens: int = Field(
        12, ge=1, description="a sentence shorter than this many tokens joins its successor"
    )
    sage_threshold: float | None = Field(
        None,
        ge=0.0,
        le=1.0,
        description="SAGE cut threshold; unset = the one calibrated into the model's meta.json",
    )
    sage_coarse_tokens: int | None = Field(
        None, ge=1, description="SAGE coarse chunk tokens; unset = the model's meta.json"
    )
    sage_coarse_mode: Literal["adaptive", "greedy"] | None = Field(
        None, description="SAGE coarse packing (greedy: the paper's); unset = the model's meta.json"
    )


class PieceGraphTuning(BaseModel):
    k_graph: int = Field(3, ge=1, description="BM25 nearest pieces considered per piece (MoGG)")
    t_graph: float = Field(
        0.2, ge=0.0, le=1.0, description="self-normalised BM25 score from which a SIMILAR edge"
    )
    candidates: int = Field(
        100, ge=1, description="pieces the fulltext index proposes per new piece (incremental)"
    )
    rebuild_factor: float = Field(
        2.0, gt=1.0, description="rebuild with fresh BM25 statistics after growing by this factor"
    )


class IngestTuning(BaseModel):
    max_source_tokens: int = Field(
        2_000_000,
        ge=1,
        le=10**9,
        description="a parsed source with more tokens is reported, not ingested",
    )
    embed_higher_levels: Literal["mean", "direct"] = Field(
        "mean", description="vectors of MoG levels >= 2: mean of the children's, or the model's"
    )
    level1_vectors: Literal["model", "pieces"] = Field(
        "model",
        description="vectors of level-1 chunks: the model, or the mean of their pieces' "
        "(half the model time, at a cost in recall)",
    )
    piece_vectors: Literal["separate", "late"] = Field(
        "late",
        description="vectors of pieces: late chunking, or 'separate' (the earlier default; a "
        "corpus stored with it is re-embedded once)",
    )
    hard_split_factor: float = Field(
        2.0, gt=1.0, description="a sentence above this many level-1 budgets is cut at the budget"
    )
    pipeline_batches: int = Field(
        2, ge=0, description="batches in flight while the next is planned (0: stage after stage)"
    )


class MoGTuning(BaseModel):
    fixed_level: int = Field(1, ge=1, description="MoG level used without any router")
    fixed_mogg_level: int = Field(1, ge=1, description="MoGG level used without any router")
    zero_weight: float = Field(
        0.05, ge=0.0, le=1.0, description="router weights below this count as 0 (Eq. 2, MoGG)"
    )
    k_r: int = Field(3, ge=1, description="top chunks per level per corpus (MoG paper: 3)")
    scoring: Literal["bm25", "dense", "hybrid"] = Field(
        "hybrid",
        description="`mog` candidate scorer; the `mog-bm25` and `mog-dense` strategies pass "
        "their own (the former setting mog.scoring)",
    )
    normalise: Literal["minmax", "max"] = Field(
        "minmax", description="per-level per-corpus score normalisation (MoG paper)"
    )
    level_skip: float = Field(
        0.5, ge=0.0, le=1.0, description="MoG skips a level below this share of the top weight"
    )
    mogg_levels: int = Field(4, ge=1, description="hop-range levels of MoGG (radius = level - 1)")
    mogg_level_skip: float = Field(
        0.3, ge=0.0, le=1.0, description="MoGG skips a hop range below this share of the top"
    )
    mogg_group_tokens: int = Field(256, ge=1, description="token cap of one MoGG hop group")
    mogg_seeds: int = Field(20, ge=1, description="seed pieces (group centres) from the index")
    mogg_seed_index: Literal["bm25", "vector", "hybrid"] = Field(
        "hybrid", description="where MoGG seeds come from"
    )
    mogg_candidates_factor: int = Field(4, ge=1, description="finest candidates = k x this")
    mogg_hops: Literal["auto", "similar", "similar+next"] = Field(
        "auto",
        description="edges a MoGG hop follows (auto: NEXT too over long documents)",
    )
    mogg_next_min_tokens: int = Field(
        1024, ge=1, description="`auto` hops follow NEXT from this median document length"
    )


def _propagation_weight(name: str) -> float:
    return float(fitted_values(PROPAGATION_WEIGHTS)[name])


class PropagationTuning(BaseModel):
    """The ``propagate`` strategy's per-layer weights (shipped in
    ``models/propagation/layer-weights.json``) and fetch."""

    lam_c: float = Field(default_factory=lambda: _propagation_weight("lam_c"), ge=0.0)
    lam_d: float = Field(default_factory=lambda: _propagation_weight("lam_d"), ge=0.0)
    lam_i: float = Field(default_factory=lambda: _propagation_weight("lam_i"), ge=0.0)
    lam_p: float = Field(default_factory=lambda: _propagation_weight("lam_p"), ge=0.0)
    lam_e: float = Field(default_factory=lambda: _propagation_weight("lam_e"), ge=0.0)
    lam_t: float = Field(default_factory=lambda: _propagation_weight("lam_t"), ge=0.0)
    k_per_layer: int = Field(8, ge=1, description="hits taken from each layer")
    aggregate: Literal["wsum", "wmax", "rrf"] = Field(
        "wsum", description="wsum (PIKE-RAG paper), wmax, or weighted reciprocal-rank fusion"
    )


def _walk_value(name: str) -> Any:
    return fitted_values(ENTITY_WALK)[name]


class EntityGraphTuning(BaseModel):
    """The ``entity`` strategy's walk; ``chunk_weight``, ``damping`` and ``max_degree`` are
    shipped in ``models/entity-walk/walk.json``."""

    question_finder: Literal["keys", "spacy"] = Field(
        "keys", description="a question's entities: n-gram keys, or the spaCy extractor"
    )
    seed_cos: float = Field(0.8, ge=-1.0, le=1.0, description="name cosine that seeds an entity")
    per_mention: int = Field(1, ge=0, description="nearest entities kept per question mention")
    concept_weight: float = Field(0.25, ge=0.0, description="seed weight of a noun phrase")
    chunk_seeds: int = Field(20, ge=0, description="nearest level-1 chunks that also seed")
    chunk_weight: float = Field(
        default_factory=lambda: float(_walk_value("chunk_weight")), ge=0.0, le=1.0
    )
    damping: float = Field(default_factory=lambda: float(_walk_value("damping")), gt=0.0, le=1.0)
    max_degree: int = Field(default_factory=lambda: int(_walk_value("max_degree")), ge=1)
    width: int = Field(500, ge=1, description="nodes kept per power-iteration step")
    references_top: int = Field(
        4,
        ge=0,
        description="REFERENCES hop: the sources that the walk's first N chunks' sources name (or "
        "are named by) join the candidates right after the chunk that links them "
        "(retrieval/strategies/references_hop.py); 0 = off; set before measuring, not fitted",
    )
    references_per: int = Field(
        2, ge=1, description="REFERENCES hop: linked sources added per chunk at most"
    )


class SageTuning(BaseModel):
    n_candidates: int = Field(20, ge=1, description="N: candidates reranked before the cut")
    min_k: int = Field(7, ge=1, description="minimum chunks kept (SAGE paper: 7)")
    gradient: float | None = Field(
        None,
        ge=0.0,
        le=1.0,
        description="g: keep S[i] while S[i] >= g * S[i-1]; unset = selection.DEFAULT_GRADIENT",
    )
    scorer: Literal["auto", "late", "cosine"] = Field(
        "auto", description="SAGE's reranker without a cross-encoder (auto: late when possible)"
    )


class RerankTuning(BaseModel):
    n_candidates: int | None = Field(
        None, ge=1, description="candidates reranked; unset = the weights file's count, else 30"
    )
    late_weight: float = Field(
        1.0, ge=0.0, description="the unfitted rule's weight of min-max MaxSim next to cosine"
    )
    section_context: bool = Field(True, description="the rerank reads section path + text")
    query_stop_words: Literal["drop", "keep"] = Field(
        "drop", description="MaxSim over the question's word pieces minus stop words, or all"
    )
    quantize: Literal["auto", "none", "int8"] = Field(
        "auto", description="which copy of the ONNX model yields the rerank's word-piece states"
    )
    state_cache_mb: int = Field(
        256,
        ge=0,
        le=65_536,
        description="MB of candidates' word-piece states kept on disk between processes "
        "(int8 copy only; 0 = off)",
    )
    chain_pair: bool = Field(
        True,
        description="reorder the late rerank's candidates by the chain-pair model (links to the "
        "first two candidates, hop score; models/rerank/chain-pair.json)",
    )


class LocalLLMTuning(BaseModel):
    model_alias: str = Field("gemma3-270m", description="model name the server answers to")
    n_ctx: int = Field(8192, ge=1, le=1_048_576, description="context window (tokens)")
    chat_format: str | None = Field(None, description="llama.cpp chat format; unset = default")
    start_timeout_s: float = Field(
        120.0, gt=0, le=3600, description="seconds the local LLM server may take to load and answer"
    )


class DistillTuning(BaseModel):
    levels: list[int] = Field(default_factory=lambda: [1], description="MoG levels distilled")
    atomize_temperature: float = Field(0.7, ge=0.0, le=2.0, description="paper value")
    max_questions: int = Field(8, ge=1, description="atomic questions kept per chunk")
    max_entities: int = Field(12, ge=1, description="entities kept per chunk")
    entity_merge_cos: float = Field(
        0.91,
        ge=-1.0,
        le=1.0,
        description="name cosine above which two entities of one type are one (all-MiniLM-L6-v2, "
        "int8 name vectors)",
    )
    name_quantize: Literal["none", "int8"] = Field(
        "int8", description="entity names embedded by the int8 copy of the ONNX model"
    )
    nlp_min_concept_mentions: int = Field(2, ge=1, description="recurrences that make a concept")
    nlp_max_entities: int = Field(40, ge=1, description="NLP mentions kept per chunk")
    nlp_parse_process: bool = Field(True, description="parse with spaCy in a child process")
    nlp_batch_chunks: int = Field(
        256, ge=1, description="chunks the NLP extractor parses and writes per transaction"
    )
    tag_sample_chunks: int = Field(12, ge=1, description="chunks read to propose tag classes")
    max_tag_classes: int = Field(8, ge=1, description="tag classes kept per corpus")
    map_confidence: float = Field(0.5, ge=0.0, le=1.0, description="query-tag mapping floor")


class ReasoningTuning(BaseModel):
    feedback_threshold: int = Field(
        9, ge=1, le=10, description="self-feedback score from which `kgp ask` accepts an answer"
    )
    feedback_rounds: int = Field(3, ge=0, description="self-feedback rounds at most")
    feedback_bias: bool = Field(False, description="SAGE feedback prompt's 60/40 shrink bias")
    max_passage_tokens: int = Field(400, ge=1, description="longest passage shown to the LLM")
    evidence_chunks: int = Field(5, ge=1, description="chunks searched without an LLM")
    evidence_sentences: int = Field(3, ge=1, description="sentences returned without an LLM")
    store_trajectories: bool = Field(
        True, description="store every decomposition run in the graph as a (:Trajectory) node"
    )


class DecompositionTuning(BaseModel):
    """PIKE-RAG's question decomposition (Algorithm 1) as the paper and its code run it."""

    max_rounds: int = Field(5, ge=1, description="N of Algorithm 1: decomposition rounds")
    delta: float = Field(0.5, ge=-1.0, le=1.0, description="cosine that makes an atom a candidate")
    top_k_atoms: int = Field(4, ge=1, description="K atomic questions per proposal")
    chunk_level: int = Field(1, ge=1, description="MoG level of fallback 2's chunks")
    fallbacks: bool = Field(True, description="the reference code's fallbacks")
    backup_select: bool = Field(True, description="select a paragraph when atom selection fails")
    max_proposals: int = Field(8, ge=1, description="proposals kept per round")


class JobsTuning(BaseModel):
    misfire_grace_s: int = Field(
        300, ge=0, le=86400, description="seconds: a scheduled fire missed by less still runs"
    )
    lease_s: float = Field(
        60.0,
        gt=0,
        le=86400,
        description="job lock lease; renewed every lease/3, so a crashed holder's lock frees "
        "itself after at most this long",
    )


class ServeTuning(BaseModel):
    auth_fail_limit: int = Field(
        10,
        ge=1,
        le=1_000_000,
        description="failed authentications from one address, within the window, before it is "
        "refused for a while (every request, the right key too)",
    )
    auth_fail_window_s: float = Field(
        60.0, gt=0, le=86400, description="seconds the failed authentications are counted over"
    )
    threads: int = Field(
        8, ge=1, le=1024, description="threads that run SDK calls (requests served at once)"
    )
    ingest_workers: int = Field(
        1, ge=1, le=64, description="background ingestion runs at once; more wait in a queue"
    )


class Tuning(BaseModel):
    """Every fitted constant and internal limit, by the section of the code that reads it."""

    neo4j: Neo4jTuning = Field(default_factory=Neo4jTuning)
    segment: SegmentTuning = Field(default_factory=SegmentTuning)
    piece_graph: PieceGraphTuning = Field(default_factory=PieceGraphTuning)
    ingest: IngestTuning = Field(default_factory=IngestTuning)
    mog: MoGTuning = Field(default_factory=MoGTuning)
    propagation: PropagationTuning = Field(default_factory=PropagationTuning)
    entity_graph: EntityGraphTuning = Field(default_factory=EntityGraphTuning)
    sage: SageTuning = Field(default_factory=SageTuning)
    rerank: RerankTuning = Field(default_factory=RerankTuning)
    local_llm: LocalLLMTuning = Field(default_factory=LocalLLMTuning)
    distill: DistillTuning = Field(default_factory=DistillTuning)
    reasoning: ReasoningTuning = Field(default_factory=ReasoningTuning)
    decomposition: DecompositionTuning = Field(default_factory=DecompositionTuning)
    jobs: JobsTuning = Field(default_factory=JobsTuning)
    serve: ServeTuning = Field(default_factory=ServeTuning)


Overrides = Mapping[str, Mapping[str, Any]]

#: What the lab set (:func:`set_overrides`); a process-wide layer over the shipped values.
_process_overrides: dict[str, dict[str, Any]] = {}
_generation = 0


def set_overrides(values: Overrides) -> None:
    """Make ``values`` (``{section: {name: value}}``) the process-wide overrides: the lab calls
    this with its ``[lab.tuning]`` table. Validated here, so a wrong name or value fails now."""
    global _generation
    merged = {s: dict(v) for s, v in values.items()}
    build(merged)  # validate
    _process_overrides.clear()
    _process_overrides.update(merged)
    _generation += 1


def process_overrides() -> tuple[int, dict[str, dict[str, Any]]]:
    return _generation, {s: dict(v) for s, v in _process_overrides.items()}


def merge(*layers: Overrides | None) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for layer in layers:
        for section, values in (layer or {}).items():
            out.setdefault(section, {}).update(values)
    return out


def build(*layers: Overrides | None) -> Tuning:
    """The shipped values with ``layers`` applied in order (later wins), validated; an unknown
    section or name is an error."""
    merged = merge(*layers)
    unknown = set(merged) - set(Tuning.model_fields)
    for section, values in merged.items():
        if section in Tuning.model_fields:
            cls = Tuning.model_fields[section].annotation
            assert isinstance(cls, type) and issubclass(cls, BaseModel)
            unknown |= {f"{section}.{k}" for k in values if k not in cls.model_fields}
    if unknown:
        raise ConfigError(
            f"unknown tuning value(s): {', '.join(sorted(unknown))}",
            hint="the names are those of kg_platform/tuning.py (section.name)",
        )
    return Tuning.model_validate(merged)
