"""The late rerank's trained query head: how the question's word pieces are read for MaxSim.

The late rerank (:mod:`kg_platform.retrieval.rerank.late_interaction`) matches each of the question's
content word pieces with its best word piece in a candidate. Untrained, a piece only finds
itself or a near-synonym: "datasets" in "what datasets do they use?" does not find "SQuAD" or
"the Penn Treebank", which is where the evidence is. The head maps each question piece's state
to where its evidence tends to be (``mapped = normalise(t + t A)``) and weighs the pieces
(``weights = softmax(t u)``) instead of averaging them equally. The candidates' states stay the
bundled model's, so nothing stored changes and the cost is two small matrix products per
question.

What ships (``kg_platform/models/rerank/query-head.onnx``, provenance and sha256 in
``query-head.json``): trained on QASPER's train split (all 823 papers, 2,054 questions, each
with ``hybrid``'s first 30 candidates read as the rerank reads them), from all-MiniLM-L6-v2's
states, by ``kgp lab rerank train-head``. On held-out papers (``bench/longdoc``) it lifts the
rerank on long documents, and it does not on short multi-hop passages, so ``rerank.query_head =
auto`` uses it only where the scope holds long documents (the shape ``auto`` reads); ``on`` and
``off`` force it. Its provenance also says which copy of the model read its training states
(``states``: ``none`` for fp32, ``int8``); ``rerank.quantize = auto`` reads the question with
that copy, since the head maps the question's states and learned those numbers (the candidates
are read by the int8 copy either way).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from kg_platform.errors import ConfigError
from kg_platform.tuning import file_sha256

if TYPE_CHECKING:
    from kg_platform.retrieval.base import RetrievalContext

SHIPPED_HEAD = Path(__file__).resolve().parents[2] / "models" / "rerank" / "query-head.onnx"
#: the embedder whose word-piece states the head was trained on (the bundled model)
EMBEDDER = "all-MiniLM-L6-v2"


class QueryHead:
    """The ONNX head: ``tokens`` [pieces, 384] (the question's L2-normalised content word-piece
    states) -> ``mapped`` [pieces, 384] (L2-normalised) and ``weights`` [pieces] (summing to 1).
    """

    def __init__(self, path: Path) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1  # a few hundred multiply-adds per piece
        self.path = path
        self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def __call__(self, tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        mapped, weights = self._session.run(
            None, {"tokens": np.ascontiguousarray(tokens, dtype=np.float32)}
        )
        return np.asarray(mapped, np.float32), np.asarray(weights, np.float64)


def provenance(path: Path = SHIPPED_HEAD) -> dict[str, Any]:
    """The head's record (``<name>.json`` next to it): sha256, base model, data, training."""
    record = path.with_suffix(".json")
    if not record.is_file():
        raise ConfigError(
            f"the query head {path} has no provenance file {record.name}",
            hint="reinstall kg-platform, or set KGP_RERANK__QUERY_HEAD=off",
        )
    loaded: dict[str, Any] = json.loads(record.read_text(encoding="utf-8"))
    return loaded


@lru_cache(maxsize=1)
def head_states(path: Path = SHIPPED_HEAD) -> str:
    """Which copy of the embedding model the head at ``path`` was trained on: ``int8`` or
    ``none`` (fp32; also a head whose provenance predates the field). The rerank reads the
    question with that copy where the head applies, under ``rerank.quantize = auto``; a missing
    provenance file reads as ``none`` here and is reported when the head loads."""
    try:
        return str(provenance(path).get("states", "none"))
    except ConfigError:
        return "none"


@lru_cache(maxsize=2)
def load_head(path: Path = SHIPPED_HEAD) -> QueryHead:
    """The head at ``path``, after checking it is the file its provenance names (a changed or
    truncated model would rerank silently worse)."""
    if not path.is_file():
        raise ConfigError(
            f"the late rerank's query head {path} is missing",
            hint="reinstall kg-platform (the file ships in the package), or set "
            "KGP_RERANK__QUERY_HEAD=off to rerank without it",
        )
    expected = provenance(path).get("sha256")
    actual = file_sha256(path)
    if expected != actual:
        raise ConfigError(
            f"the query head {path} does not match its provenance (sha256 {actual[:12]}..., "
            f"expected {str(expected)[:12]}...)",
            hint="reinstall kg-platform, or retrain it with `kgp lab rerank train-head`, "
            "which writes both files",
        )
    return QueryHead(path)


def head_for(ctx: "RetrievalContext") -> QueryHead | None:
    """The head the rerank uses in this context, or ``None``: ``rerank.query_head`` ``on``
    always, ``off`` never, ``auto`` where the scope holds long documents; never over another
    embedder's word pieces than the one it was trained on."""
    mode = ctx.settings.rerank.query_head
    if mode == "off" or getattr(ctx.embedder, "model_name", None) != EMBEDDER:
        return None
    if mode == "auto":
        # texts reranked outside any graph (a bare context) have no scope whose shape to read
        if getattr(ctx, "graph", None) is None or not ctx.shape().holds_documents:
            return None
    return load_head()
