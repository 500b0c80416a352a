"""The default local embedder: a sentence-transformers BERT model run by ONNX Runtime.

Why: importing torch + sentence-transformers and loading the model costs tens of CPU seconds per
command; ONNX Runtime + ``tokenizers`` load in well under a second and embed faster on CPU. The
vectors are the same as the torch model's (mean pooling and L2 normalisation exactly as
sentence-transformers does them), so a graph embedded with either provider is queryable by the
other: both record the same model name and dimension.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kg_platform.embedding.local import resolve_model_path
from kg_platform.errors import EmbeddingError

__all__ = ["OnnxEmbedder", "TokenStates", "default_threads", "split_batches"]

log = logging.getLogger(__name__)


#: what one more model call costs, in padded word pieces: a call over fewer rows multiplies
#: smaller matrices, less efficiently, so splitting down to no padding at all runs slower
#: (lab/results/2026-11-28/retrieve-cpu-papers/)
CALL_COST_TOKENS = 32


def split_batches(
    lengths: Sequence[int], batch_size: int, batch_tokens: int, call_cost: int = CALL_COST_TOKENS
) -> list[tuple[int, int]]:
    """Model calls over texts of ``lengths`` word pieces, sorted longest first: ``(start, end)``
    ranges, each at most ``batch_size`` texts and ``batch_tokens`` padded pieces (one text
    always fits), chosen to pad the fewest pieces with ``call_cost`` pieces charged per call.

    Why not fill each call to ``batch_tokens``: a call pads every text to its longest, and a
    handful of texts (the rerank's 30 candidates) fills calls with lengths far apart, so greedy
    filling spends a good part of the model's work on padding there. An exact split over the
    sorted lengths (a shortest path, at most ``batch_size`` steps from each text) pads little."""
    n = len(lengths)
    cost = np.full(n + 1, np.inf)
    cost[0] = 0.0
    previous = np.zeros(n + 1, dtype=np.int64)
    for start in range(n):
        width = max(int(lengths[start]), 1)
        rows = max(1, min(batch_size, batch_tokens // width, n - start))
        ends = np.arange(start + 1, start + rows + 1)
        reached = cost[start] + (ends - start) * width + call_cost
        better = reached < cost[ends]
        cost[ends[better]] = reached[better]
        previous[ends[better]] = start
    calls: list[tuple[int, int]] = []
    end = n
    while end > 0:
        calls.append((int(previous[end]), end))
        end = int(previous[end])
    return calls[::-1]


def default_threads() -> int:
    """The CPUs this process may use (respects taskset/cgroup affinity, unlike os.cpu_count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _max_seq_length(model_dir: Path) -> int:
    cfg = model_dir / "sentence_bert_config.json"
    if cfg.exists():
        value = json.loads(cfg.read_text(encoding="utf-8")).get("max_seq_length")
        if value:
            return int(value)
    return int(
        json.loads((model_dir / "config.json").read_text(encoding="utf-8")).get(
            "max_position_embeddings", 512
        )
    )


def _check_mean_pooling(model_dir: Path) -> None:
    pooling = model_dir / "1_Pooling" / "config.json"
    if pooling.exists():
        cfg = json.loads(pooling.read_text(encoding="utf-8"))
        if not cfg.get("pooling_mode_mean_tokens", False) or any(
            cfg.get(k)
            for k in (
                "pooling_mode_cls_token",
                "pooling_mode_max_tokens",
                "pooling_mode_mean_sqrt_len_tokens",
            )
        ):
            raise EmbeddingError(
                f"{model_dir} does not use plain mean pooling; the ONNX embedder implements only that",
                hint="set KGP_EMBEDDING__PROVIDER=sentence-transformers for this model",
            )


#: one tokenizer per file and window: the fp32 model and its int8 copy read with the same one
_TOKENIZERS: dict[tuple[str, int], Any] = {}
_TOKENIZERS_LOCK = threading.Lock()


def _tokenizer(tokenizer_class: Any, path: Path, max_tokens: int) -> Any:
    """The model folder's tokenizer, truncating at ``max_tokens`` and not padding (each call
    pads to its own longest text), loaded once per process (loading parses a large JSON)."""
    key = (str(path), max_tokens)
    with _TOKENIZERS_LOCK:
        if key not in _TOKENIZERS:
            tokenizer = tokenizer_class.from_file(str(path))
            tokenizer.enable_truncation(max_length=max_tokens)
            tokenizer.no_padding()
            _TOKENIZERS[key] = tokenizer
        return _TOKENIZERS[key]


@dataclass(frozen=True)
class TokenStates:
    """One text through the model: its sentence vector and its word pieces' states and spans."""

    vector: np.ndarray  # (dimension,), L2-normalised
    tokens: np.ndarray  # (n, dimension), last hidden states, not normalised
    offsets: np.ndarray  # (n, 2), [start, end) character offsets into the text


class OnnxEmbedder:
    """Tokenise with ``tokenizers``, run the encoder + mean pooling in ONNX Runtime, normalise.

    Texts are sorted by length before batching (as sentence-transformers does) so a batch pads to
    similar lengths; results come back in the caller's order. A model call holds at most
    ``batch_size`` texts and at most ``batch_tokens`` word pieces once padded: the attention
    scores of one call grow with texts x length^2 (64 texts of 256 pieces: ~200 MB), and past the
    CPU's cache the same arithmetic runs slower (see ``embedding.batch_tokens``).
    """

    def __init__(
        self,
        model: str,
        *,
        cache_dir: Path,
        batch_size: int = 64,
        batch_tokens: int = 1024,
        threads: int = 0,
        quantize: str = "none",
        device: str = "cpu",
    ) -> None:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbeddingError(
                f"the ONNX embedder needs onnxruntime and tokenizers ({exc})",
                hint="pip install onnxruntime tokenizers, or set "
                "KGP_EMBEDDING__PROVIDER=sentence-transformers",
            ) from exc
        from kg_platform.embedding.onnx_export import cached_onnx_path

        model_dir = resolve_model_path(model)
        _check_mean_pooling(model_dir)
        if quantize not in ("none", "int8"):
            raise EmbeddingError(
                f"unknown quantisation {quantize!r}",
                hint="set KGP_EMBEDDING__QUANTIZE to none or int8",
            )
        onnx_file = cached_onnx_path(
            model_dir, Path(cache_dir), "fp32" if quantize == "none" else quantize
        )
        self.max_tokens = _max_seq_length(model_dir)
        tokenizer_file = model_dir / "tokenizer.json"
        if not tokenizer_file.exists():
            raise EmbeddingError(
                f"no tokenizer.json in {model_dir}",
                hint="use a model folder saved by transformers >= 4 (fast tokenizer)",
            )
        self._tokenizer = _tokenizer(Tokenizer, tokenizer_file, self.max_tokens)
        pad_id = self._tokenizer.token_to_id("[PAD]")
        self._pad_id = 0 if pad_id is None else pad_id
        cores = threads or default_threads()
        # The int8 copy reads short calls (one rerank candidate, a batch of entity names) whose
        # matrix products are too small to split well across cores: calls run side by side on
        # one thread each instead, which takes less wall time and less CPU (the lab's record,
        # 2026-11-29/int8-calls). The fp32 model keeps one call on all cores: ingestion's calls
        # are large, and a question is one call.
        self._parallel_calls = cores if quantize != "none" else 1
        self._call_pool: ThreadPoolExecutor | None = None
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1 if self._parallel_calls > 1 else cores
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # Idle worker threads sleep instead of spinning: on a shared machine spinning burns CPU
        # time that other processes (Neo4j, the rest of the pipeline) need.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        providers = ["CPUExecutionProvider"]
        if device.startswith("cuda"):
            # onnxruntime-gpu has the CUDA provider; the plain wheel has not, and then the CPU
            # runs the model (said once in the log, not an error: the vectors are the same)
            if "CUDAExecutionProvider" in ort.get_available_providers():
                providers.insert(0, "CUDAExecutionProvider")
            else:
                log.warning(
                    "embedding device %r asked for, but this onnxruntime has no CUDA provider "
                    "(pip install onnxruntime-gpu); embedding on the CPU",
                    device,
                )
        try:
            self._session = ort.InferenceSession(
                str(onnx_file), sess_options=options, providers=providers
            )
        except Exception as exc:  # a corrupt cache file is the usual cause
            raise EmbeddingError(
                f"ONNX Runtime could not load {onnx_file}: {exc}",
                hint=f"delete {onnx_file.parent} to rebuild it",
            ) from exc
        self.model_name = model
        self.dimension = int(self._session.get_outputs()[0].shape[1])
        self.batch_size = batch_size
        self.batch_tokens = batch_tokens
        self.quantize = quantize
        self.onnx_file = onnx_file

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        stripped = [str(t).strip() for t in texts]
        out = np.empty((len(texts), self.dimension), dtype=np.float32)

        def call(batch: tuple[np.ndarray, list[Any], dict[str, Any]]) -> None:
            idx, _, feeds = batch
            (pooled,) = self._session.run(["sentence_embedding"], feeds)
            out[idx] = pooled

        self._run_calls(call, self._batches(stripped))
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.asarray(out / np.maximum(norms, 1e-12), dtype=np.float32)

    def embed_tokens(self, texts: list[str]) -> list[TokenStates]:
        """Per text: its normalised vector (as :meth:`embed` gives it) and the last hidden state
        of each of its word pieces with the character span it covers (special tokens left out;
        a text longer than the model's window keeps only the tokens the model read).

        With a quantised model each text is read in a call of its own: dynamic quantisation
        scales a call's activations by the whole call, so batched states would depend on the
        texts read beside them, and a reranker that caches states would rank one question
        differently after another. Texts of a few hundred word pieces cost about the same CPU
        either way (lab/results/2026-11-28/int8-alone/)."""
        out: dict[int, TokenStates] = {}
        # not stripped: the offsets must point into the caller's text
        per_call = 1 if self.quantize != "none" else self.batch_size

        def call(batch: tuple[np.ndarray, list[Any], dict[str, Any]]) -> None:
            idx, encodings, feeds = batch
            pooled, states = self._session.run(["sentence_embedding", "token_embeddings"], feeds)
            for row, (i, enc) in enumerate(zip(idx, encodings)):
                # each Encoding attribute builds a fresh Python list: read each once
                keep = np.flatnonzero(
                    np.asarray(enc.attention_mask, dtype=bool)
                    & ~np.asarray(enc.special_tokens_mask, dtype=bool)
                )
                vector = pooled[row] / max(float(np.linalg.norm(pooled[row])), 1e-12)
                out[int(i)] = TokenStates(
                    vector=vector.astype(np.float32),
                    tokens=np.asarray(states[row, keep], dtype=np.float32),
                    offsets=np.asarray(enc.offsets, dtype=np.int64).reshape(-1, 2)[keep],
                )

        self._run_calls(call, self._batches(texts, per_call))
        return [out[i] for i in range(len(texts))]

    def _run_calls(
        self,
        call: Callable[[tuple[np.ndarray, list[Any], dict[str, Any]]], None],
        batches: Iterable[tuple[np.ndarray, list[Any], dict[str, Any]]],
    ) -> None:
        """Run ``call`` on every batch: in turn as they are made, or on :attr:`_parallel_calls`
        threads side by side (the int8 copy); each call writes its own rows, so the order does
        not matter."""
        if self._parallel_calls < 2:
            for batch in batches:
                call(batch)
            return
        if self._call_pool is None:
            self._call_pool = ThreadPoolExecutor(
                self._parallel_calls, thread_name_prefix="kgp-onnx-call"
            )
        for done in [self._call_pool.submit(call, batch) for batch in batches]:
            done.result()  # re-raises a call's error here

    def _batches(
        self, texts: list[str], batch_size: int | None = None
    ) -> Iterator[tuple[np.ndarray, list[Any], dict[str, Any]]]:
        """Texts longest first (a call pads to similar lengths), split into model calls of at
        most ``batch_size`` texts (default: the embedder's) by :func:`split_batches`: each
        call's positions in ``texts``, their unpadded encodings and the model's padded input
        feeds."""
        encodings = self._tokenizer.encode_batch(texts)
        order = np.argsort([-len(e.ids) for e in encodings], kind="stable")
        lengths = [len(encodings[i].ids) for i in order]
        for start, end in split_batches(lengths, batch_size or self.batch_size, self.batch_tokens):
            idx = order[start:end]
            width = lengths[start]  # the longest of the call: its padding
            batch = [encodings[i] for i in idx]
            ids = np.full((len(batch), width), self._pad_id, dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, enc in enumerate(batch):
                ids[row, : len(enc.ids)] = enc.ids
                mask[row, : len(enc.ids)] = 1
            yield idx, batch, {"input_ids": ids, "attention_mask": mask}
